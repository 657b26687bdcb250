// Command reliar runs and operates Reliar outboxes: demo, migrate, relay and the operator commands.
package main

func main() {}
