package server

import (
	"io"
	"net/http"
	"runtime"
	"testing"
)

// benchStreams drives get with 8 requests in flight on one connection
// (2 cores x 4), as bench/h3/run.sh's h3load does.
func benchStreams(b *testing.B, c *http.Client, url string) {
	b.ReportAllocs()
	b.SetParallelism(8 / min(8, max(1, runtime.GOMAXPROCS(0))))
	cpu0 := processCPU(b)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		req, _ := http.NewRequest("GET", url, nil)
		for pb.Next() {
			resp, err := c.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	})
	b.StopTimer()
	// CPU (user+system, client and server) per request: steadier than
	// ns/op on a shared machine, where wall time includes waiting.
	b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N), "cpu-ns/op")
}

// streamBenchHandler answers "ok\n" without being Inline, so that every
// engine serves each stream on a stream goroutine (the path the stack
// growth was on: h3stream.go, h2stream.go's runStream).
var streamBenchHandler = HandlerFunc(func(w *ResponseWriter, r *Request) {
	w.AddHeader("Content-Type", "text/plain")
	w.WriteString("ok\n")
})

// BenchmarkH3Streams: HTTP/3 requests on one connection, 8 in flight;
// the client (quic-go's) runs in the same process, so ns/op is both
// sides' CPU. A CPU profile (-cpuprofile) shows whether stream
// goroutines grow their stacks (runtime.newstack).
func BenchmarkH3Streams(b *testing.B) {
	_, p, addr := startH3(b, streamBenchHandler, Options{}, HTTP3Options{})
	c, _ := h3Client(b, p)
	benchStreams(b, c, "https://"+addr+"/")
}

// BenchmarkH2Streams: the same over h2c (x/net/http2's client).
func BenchmarkH2Streams(b *testing.B) {
	_, addr := startH2C(b, streamBenchHandler, Options{})
	c := h2cClient()
	defer c.CloseIdleConnections()
	benchStreams(b, c, "http://"+addr+"/")
}
