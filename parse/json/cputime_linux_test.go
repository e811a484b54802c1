package json

import (
	"syscall"
	"testing"
	"time"
)

// cpuTime is the CPU time this process has used. The development machines
// are shared: wall-clock ns/op moves by tens of percent with other tenants'
// load, CPU time per op much less, so benchmarks report both.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the CPU time since start per iteration as cpu-ns/op.
func reportCPU(b *testing.B, start time.Duration) {
	if b.N > 0 {
		b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
	}
}
