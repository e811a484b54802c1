package server

import (
	"syscall"
	"testing"
)

// BenchmarkServeStaticCPU is BenchmarkServeStatic's simdedge case with the
// process's CPU time per request (cpu-ns/op) beside the wall time: on a
// machine shared with other work, wall time mostly measures the others,
// while CPU time still counts this server's own work (issue 27's A/B of
// path normalisation, bench/results/pathnorm-ab-29b28ac.md). It uses
// only the API of 29b28ac, so the same file runs on both sides.
func BenchmarkServeStaticCPU(b *testing.B) {
	h := HandlerFunc(func(w *ResponseWriter, r *Request) {
		w.AddHeader("Content-Type", "text/plain")
		w.WriteString("ok\n")
	})
	s := New(Options{Handler: h})
	defer s.Close()
	start := processCPU(b)
	serverRun(b, func(l *serverOneShot) { s.ServeStream(TCPListener(l)) })
	b.ReportMetric(float64(processCPU(b)-start)/float64(b.N), "cpu-ns/op")
}

// processCPU is the user and system time the process has used, in ns.
func processCPU(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
