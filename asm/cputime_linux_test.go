package asm

import (
	"syscall"
	"testing"
	"time"
)

// cpuTime is the CPU time this process has used. On a shared, loaded
// machine wall-clock ns/op varies by tens of percent while CPU time per op
// stays within a few percent, so benchmarks report both.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU runs loop and reports its CPU time per iteration as cpu-ns/op.
func reportCPU(b *testing.B, loop func()) {
	start := cpuTime()
	loop()
	if b.N > 0 {
		b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
	}
}
