package server

import (
	"bytes"
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"testing"

	"github.com/simdedge/simdedge/internal/testnet"
)

// goroutineID is the running goroutine's number, from the first line of
// its stack ("goroutine 42 [running]:"); tests only.
func goroutineID() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	if i := bytes.IndexByte(b, ' '); i > 0 {
		b = b[:i]
	}
	id, _ := strconv.ParseUint(string(b), 10, 64)
	return id
}

// workerCounter is a stream handler (not Inline, so it runs on a stream
// worker on every engine) that records which goroutines served it.
type workerCounter struct {
	mu  sync.Mutex
	ids map[uint64]bool
	n   int
}

func (wc *workerCounter) ServeEdge(w *ResponseWriter, _ *Request) {
	wc.mu.Lock()
	if wc.ids == nil {
		wc.ids = map[uint64]bool{}
	}
	wc.ids[goroutineID()] = true
	wc.n++
	wc.mu.Unlock()
	w.WriteString("ok\n")
}

// checkReused: sequential requests were served by a few goroutines, not
// one new goroutine each (which grew its stack on every response:
// streamwork.go). A worker may still be on its way back to the pool
// when the next stream starts, so a few more than one are allowed.
func (wc *workerCounter) checkReused(t *testing.T, requests int) {
	t.Helper()
	wc.mu.Lock()
	defer wc.mu.Unlock()
	if wc.n != requests {
		t.Fatalf("handler ran %d times, want %d", wc.n, requests)
	}
	if len(wc.ids) > requests/2 {
		t.Errorf("%d requests served by %d goroutines, want stream workers reused (at most %d)", requests, len(wc.ids), requests/2)
	}
}

const workerRequests = 30

func TestH3StreamWorkersReused(t *testing.T) {
	wc := &workerCounter{}
	_, p, addr := startH3(t, wc, Options{}, HTTP3Options{})
	c, _ := h3Client(t, p)
	for range workerRequests {
		if resp, body := h3Do(t, c, "GET", "https://"+addr+"/", nil); resp.StatusCode != http.StatusOK || string(body) != "ok\n" {
			t.Fatalf("got %d %q", resp.StatusCode, body)
		}
	}
	wc.checkReused(t, workerRequests)
}

func TestH2StreamWorkersReused(t *testing.T) {
	wc := &workerCounter{}
	s, addr := startH2C(t, wc, Options{})
	c := h2cClient()
	defer c.CloseIdleConnections()
	for range workerRequests {
		if resp, body := h2Get(t, c, "http://"+addr+"/"); resp.StatusCode != http.StatusOK || body != "ok\n" {
			t.Fatalf("got %d %q", resp.StatusCode, body)
		}
	}
	wc.checkReused(t, workerRequests)
	// The server still runs: its waiting workers end once idle
	// (streamWorkerIdle), not only at Shutdown.
	idle := func() int {
		s.workers.mu.Lock()
		defer s.workers.mu.Unlock()
		return len(s.workers.idle)
	}
	testnet.WaitFor(t, testTimeout, "a stream worker to wait", func() bool { return idle() > 0 })
	testnet.WaitFor(t, 5*streamWorkerIdle, "idle stream workers to end", func() bool { return idle() == 0 })
}
