package harness

import (
	"syscall"
	"time"
)

// cpuTime is the user and system CPU time this process has used. Unlike wall
// time, other processes on a busy machine do not inflate it (the database's
// own CPU time is not in it).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
