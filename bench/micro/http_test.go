package micro

import (
	"bufio"
	"bytes"
	"io"
	nethttp "net/http"
	"syscall"
	"testing"
	"time"

	"github.com/simdedge/simdedge/asm"
	"github.com/simdedge/simdedge/parse/http"
	"github.com/valyala/fasthttp"
)

// httpCorpus is one request of BenchmarkHTTPRequest: name, bytes, and
// whether a chunked body follows the head.
type httpCorpus struct {
	name    string
	data    []byte
	chunked bool
}

// httpCPUTime is the CPU time the process has used so far (user and
// system, all threads). The development machines are shared: wall-clock
// ns/op swings by 2-3x with other tenants' load, CPU time per op much
// less, so each benchmark also reports cpu-ns/op. For these parsers the
// process's other threads (GC workers) only count when the parser
// allocates, which is then part of its cost.
func httpCPUTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// httpReportCPU reports CPU time per iteration since start.
func httpReportCPU(b *testing.B, start time.Duration) {
	if b.N > 0 {
		b.ReportMetric(float64(httpCPUTime()-start)/float64(b.N), "cpu-ns/op")
	}
}

func httpCorpora(b *testing.B) []httpCorpus {
	return []httpCorpus{
		{"small_get", []byte("GET / HTTP/1.1\r\nHost: example.com\r\nUser-Agent: curl/8.5.0\r\nAccept: */*\r\n\r\n"), false},
		{"kittyhell_703B", sharedData(b, "http/req_kittyhell_703B.txt"), false},
		{"post_chunked", sharedData(b, "http/req_http_parser_post_chunked.txt"), true},
	}
}

// BenchmarkHTTPRequest parses whole requests: the head, and for the
// chunked corpus the body too (decoded, or read to io.Discard). Every
// implementation does the same work per request; SetBytes is the
// request's length.
//
//	simdedge         parse/http with the dispatched asm kernels
//	simdedge_purego  parse/http with asm forced to its pure-Go twins
//	net_http         net/http.ReadRequest (+ reading the body)
//	fasthttp         fasthttp v1.73.0 RequestHeader.Read (Request.Read
//	                 with body for the chunked corpus)
func BenchmarkHTTPRequest(b *testing.B) {
	for _, c := range httpCorpora(b) {
		b.Run(c.name+"/simdedge", func(b *testing.B) { httpBenchSimdedge(b, c, asm.Active()) })
		b.Run(c.name+"/simdedge_purego", func(b *testing.B) { httpBenchSimdedge(b, c, asm.Generic) })
		b.Run(c.name+"/net_http", func(b *testing.B) { httpBenchNetHTTP(b, c) })
		b.Run(c.name+"/fasthttp", func(b *testing.B) { httpBenchFasthttp(b, c) })
	}
}

// BenchmarkHTTPLevels parses the 703-byte corpus request's head at each
// asm level this CPU has (avx512, avx2, generic), for side-by-side runs
// against picohttpparser: same input, head only, no body, the Request
// reused as a server reuses it. cpu-ns/op is the figure to compare on a
// shared machine (see httpCPUTime).
func BenchmarkHTTPLevels(b *testing.B) {
	c := httpCorpus{"kittyhell_703B", sharedData(b, "http/req_kittyhell_703B.txt"), false}
	for _, lvl := range asm.Levels() {
		b.Run(c.name+"/"+lvl.String(), func(b *testing.B) { httpBenchSimdedge(b, c, lvl) })
	}
}

func httpBenchSimdedge(b *testing.B, c httpCorpus, level asm.Level) {
	prev := asm.SetLevel(level)
	defer asm.SetLevel(prev)
	var req http.Request
	var dec http.ChunkedDecoder
	// The chunked decoder works in place, so each iteration decodes a
	// fresh copy of the request (the copy is part of the measured work,
	// as a read into a connection buffer would be).
	work := make([]byte, len(c.data))
	b.SetBytes(int64(len(c.data)))
	b.ReportAllocs()
	start := httpCPUTime()
	defer func() { httpReportCPU(b, start) }()
	for b.Loop() {
		buf := c.data
		if c.chunked {
			copy(work, c.data)
			buf = work
		}
		n, err := http.ParseRequest(buf, &req)
		if err != nil {
			b.Fatal(err)
		}
		if req.Body == http.BodyChunked {
			dec.Reset()
			if _, _, err := dec.Decode(buf[n:]); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func httpBenchNetHTTP(b *testing.B, c httpCorpus) {
	rd := bytes.NewReader(c.data)
	br := bufio.NewReader(rd)
	b.SetBytes(int64(len(c.data)))
	b.ReportAllocs()
	start := httpCPUTime()
	defer func() { httpReportCPU(b, start) }()
	for b.Loop() {
		rd.Reset(c.data)
		br.Reset(rd)
		req, err := nethttp.ReadRequest(br)
		if err != nil {
			b.Fatal(err)
		}
		if c.chunked {
			if _, err := io.Copy(io.Discard, req.Body); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func httpBenchFasthttp(b *testing.B, c httpCorpus) {
	rd := bytes.NewReader(c.data)
	br := bufio.NewReader(rd)
	var h fasthttp.RequestHeader
	var req fasthttp.Request
	b.SetBytes(int64(len(c.data)))
	b.ReportAllocs()
	start := httpCPUTime()
	defer func() { httpReportCPU(b, start) }()
	for b.Loop() {
		rd.Reset(c.data)
		br.Reset(rd)
		if c.chunked {
			req.Reset()
			if err := req.Read(br); err != nil {
				b.Fatal(err)
			}
			continue
		}
		h.Reset()
		if err := h.Read(br); err != nil {
			b.Fatal(err)
		}
	}
}
