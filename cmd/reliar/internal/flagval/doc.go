// Package flagval holds the flag values every reliar command uses, so that
// a flag, its RELIAR_* variable and its config key mean the same thing in
// every command and are checked before anything connects:
//
//   - zero, or unset, means the default — the default a command states in
//     its help, derived from other flags where it says so;
//   - a negative number or duration is refused, except the words a flag
//     takes for the values that switch something off: "forever" for a
//     retention that keeps rows (outbox.KeepForever), "off" for a switch
//     that is on by default (outbox.Off);
//   - durations take Go's units (90m, 36h) or whole days (14d);
//   - a schema is a plain identifier, never empty when given; an address
//     is host:port with a port from 0 to 65535.
//
// A refused value fails the flag's Set, so the command exits with status 2
// and one line naming the flag, whether the value came from the command
// line, the environment or the file.
package flagval
