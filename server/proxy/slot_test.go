package proxy

import (
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/internal/servetest"
)

// swapEvery is how often TestSlotSwap swaps while requests flow.
const swapEvery = 200 * time.Microsecond

// TestSlotSwap: a Slot's Proxy is replaced while requests flow, on every
// engine and proxy path (the package's TestMain runs each test on each):
// requests that arrive after Store go to the new upstream, and none fails
// or mixes the two in one exchange.
func TestSlotSwap(t *testing.T) {
	name := func(s string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, s) })
	}
	a, b := startOrigin(t, name("a")), startOrigin(t, name("b"))
	upA := newUpstream(t, UpstreamOptions{Targets: []string{a.addr}})
	upB := newUpstream(t, UpstreamOptions{Targets: []string{b.addr}})
	pa, pb := New(upA, Options{}), New(upB, Options{})
	slot := NewSlot(pa)
	s := server.New(server.Options{Handler: slot, LoopProxy: testLoopProxy})
	addr := servetest.Serve(t, s, testEngine)
	c := client(t)
	fetch := func() (string, error) {
		resp, err := c.Get("http://" + addr + "/")
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			return "", fmt.Errorf("status %d", resp.StatusCode)
		}
		return string(body), err
	}
	if got, err := fetch(); err != nil || got != "a" {
		t.Fatalf("before the swap: %q %v", got, err)
	}
	const clients, each = 4, 50
	var wg sync.WaitGroup
	errs := make(chan error, clients*each)
	for range clients {
		wg.Go(func() {
			for range each {
				if got, err := fetch(); err != nil || got != "a" && got != "b" {
					errs <- fmt.Errorf("%q %v", got, err)
				}
			}
		})
	}
	// Swap until the clients are done (bounded by their requests).
	done := make(chan struct{})
	swapped := make(chan int)
	go func() {
		n := 0
		for {
			select {
			case <-done:
				swapped <- n
				return
			case <-time.After(swapEvery):
				slot.Store([]*Proxy{pa, pb}[n%2])
				n++
			}
		}
	}()
	wg.Wait()
	close(done)
	if n := <-swapped; n == 0 {
		t.Log("no swap happened during the requests")
	}
	close(errs)
	for err := range errs {
		t.Error("during swaps:", err)
	}
	slot.Store(pb)
	if got, err := fetch(); err != nil || got != "b" {
		t.Errorf("after the swap: %q %v", got, err)
	}
	if slot.Proxy() != pb || pb.Upstream() != upB {
		t.Error("Proxy or Upstream does not say what serves")
	}
}
