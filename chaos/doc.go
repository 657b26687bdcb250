// Package chaos proves Reliar's delivery guarantee under faults: it runs the relay as a
// child process against real PostgreSQL and NATS, injects faults, and checks every
// committed message against what a sink saw, attributing each duplicate to a window.
package chaos
