//go:build unix

package http

import (
	"syscall"
	"time"
)

// processCPU is the CPU time the process has used (user and system). The
// development machines are shared, so wall-clock ns/op swings with other
// tenants' load; CPU time per op much less (see bench/micro's httpCPUTime).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
