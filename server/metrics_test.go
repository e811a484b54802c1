package server

import (
	"bufio"
	"io"
	"testing"
	"time"

	"github.com/simdedge/simdedge/server/metrics"
)

// TestZeroAllocMetrics: with Options.Metrics on, a warm keep-alive request
// still allocates nothing, and it is counted (route, method, status,
// duration, bytes) on the engine under test.
func TestZeroAllocMetrics(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	set := metrics.NewSet()
	rt := set.Route("health")
	h := routed(rt, HandlerFunc(func(w *ResponseWriter, r *Request) {
		w.AddHeader("Content-Type", "text/plain")
		w.WriteString("ok\n")
	}))
	_, addr := startTCP(t, h, Options{Metrics: set})
	if allocs := keepAliveAllocs(t, addr); allocs != 0 {
		t.Errorf("%v allocations per request with metrics on, want 0", allocs)
	}
	tot := rt.Totals()
	n := tot.Requests[metrics.MethodGet][2]
	// keepAliveAllocs sends one request to learn the size, then
	// AllocsPerRun's warm-up run and its 200 runs.
	if n < 200 || tot.Buckets[len(tot.Buckets)-1] != n || tot.BytesOut != 3*n || tot.BytesIn == 0 {
		t.Errorf("counted %d GET 2xx, %d durations, %d bytes out, %d in", n, tot.Buckets[len(tot.Buckets)-1], tot.BytesOut, tot.BytesIn)
	}
	ls := set.Listeners()
	if len(ls) != 1 || ls[0].Name() != addr || ls[0].Totals().Opened == 0 {
		t.Errorf("listeners counted: %d (want one, named %s)", len(ls), addr)
	}
	if u := set.Unmatched().Totals(); u.Buckets[len(u.Buckets)-1] != 0 {
		t.Errorf("%d requests counted as unmatched", u.Buckets[len(u.Buckets)-1])
	}
}

// TestMetricsParseErrors: a malformed request is counted by its status.
func TestMetricsParseErrors(t *testing.T) {
	set := metrics.NewSet()
	_, addr := startTCP(t, HandlerFunc(func(w *ResponseWriter, r *Request) {}), Options{Metrics: set})
	c := dial(t, addr)
	if _, err := c.Write([]byte("GET / HTTP/9.9\r\nHost: x\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 512)
	c.Read(buf) // the error answer; the server then closes
	c.Close()
	want := metrics.ParseStatusIndex(505)
	// Counted before the answer is queued, so already when it is read;
	// the bounded wait only guards against a slow machine.
	for range 250 {
		if set.Listener(addr).Totals().ParseErrors[want] == 1 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Errorf("parse errors = %v, want one 505", set.Listener(addr).Totals().ParseErrors)
}

// TestMetricsPerIPRefusal: a connection over MaxConnsPerIP is counted as
// refused on its listener, and only it.
func TestMetricsPerIPRefusal(t *testing.T) {
	set := metrics.NewSet()
	_, addr := startTCP(t, splitHandler{}, Options{Limits: Limits{MaxConnsPerIP: 1}, Metrics: set})
	c := dialFrom(t, "127.0.0.1", addr)
	if body := get(t, c, bufio.NewReader(c), "/i/a"); body != "ok /i/a" {
		t.Fatalf("within the cap: %q", body)
	}
	over := dialFrom(t, "127.0.0.1", addr)
	io.WriteString(over, "GET /i/over HTTP/1.1\r\nHost: x\r\n\r\n")
	expectClosed(t, bufio.NewReader(over))
	tot := set.Listener(addr).Totals()
	if tot.Refused[metrics.RefusedPerIP] != 1 || tot.Opened != 1 || tot.Active() != 1 {
		t.Errorf("refused %d, opened %d, active %d; want 1, 1, 1", tot.Refused[metrics.RefusedPerIP], tot.Opened, tot.Active())
	}
}
