//go:build rdma && cgo

package rdma_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/rdma"
)

// loopback is the node every test fabric serves: the tcp provider's lo
// domain (without it the provider picks eth0).
const loopback = "127.0.0.1"

// openFabric opens provider on loopback, skipping (or failing under
// REQUIRE_RDMA) when libfabric cannot, and closes it at cleanup.
func openFabric(tb testing.TB, provider string) *rdma.Fabric {
	tb.Helper()
	f, err := rdma.OpenFabric(rdma.Options{Provider: provider, Node: loopback})
	testenv.NeedRDMA(tb, err)
	tb.Cleanup(func() {
		if err := f.Close(); err != nil {
			tb.Errorf("Fabric.Close: %v", err)
		}
	})
	return f
}

// pair is a connected pair of endpoints in one process.
type pair struct {
	f              *rdma.Fabric
	client, server *rdma.Endpoint
}

// connect listens on an ephemeral loopback port, dials it and accepts.
func connect(tb testing.TB, f *rdma.Fabric) pair {
	tb.Helper()
	l, err := f.Listen(loopback + ":0")
	if err != nil {
		tb.Fatalf("Listen: %v", err)
	}
	defer l.Close()
	type result struct {
		e   *rdma.Endpoint
		err error
	}
	accepted := make(chan result, 1)
	go func() {
		e, err := l.Accept()
		accepted <- result{e, err}
	}()
	c, err := f.Dial(l.Addr().String(), 5*time.Second)
	if err != nil {
		l.Close()
		<-accepted
		tb.Fatalf("Dial %s: %v", l.Addr(), err)
	}
	r := <-accepted
	if r.err != nil {
		c.Close()
		tb.Fatalf("Accept: %v", r.err)
	}
	p := pair{f: f, client: c, server: r.e}
	tb.Cleanup(func() {
		p.client.Close()
		p.server.Close()
	})
	return p
}

// register maps a region and closes it at cleanup.
func register(tb testing.TB, f *rdma.Fabric, size int) *rdma.Region {
	tb.Helper()
	r, err := f.Register(size)
	if err != nil {
		tb.Fatalf("Register(%d): %v", size, err)
	}
	tb.Cleanup(func() {
		if err := r.Close(); err != nil {
			tb.Errorf("Region.Close: %v", err)
		}
	})
	return r
}

// collect waits until want completions arrived on e (bounded by 10 s) and
// returns them.
func collect(tb testing.TB, e *rdma.Endpoint, want int) []rdma.Completion {
	tb.Helper()
	got, err := gather(e, want)
	if err != nil {
		tb.Fatal(err)
	}
	return got
}

// gather is collect for any goroutine.
func gather(e *rdma.Endpoint, want int) ([]rdma.Completion, error) {
	var got []rdma.Completion
	buf := make([]rdma.Completion, 64)
	deadline := time.Now().Add(10 * time.Second)
	for len(got) < want {
		if time.Now().After(deadline) {
			return got, fmt.Errorf("%d of %d completions after 10 s", len(got), want)
		}
		n, err := e.Wait(buf[:min(len(buf), want-len(got))], time.Second)
		if err != nil && !errors.Is(err, rdma.ErrTimeout) {
			return got, fmt.Errorf("Wait after %d of %d completions: %w", len(got), want, err)
		}
		got = append(got, buf[:n]...)
	}
	return got, nil
}

// collect2 collects na completions on a and nb on b at the same time: over
// software providers a large transfer moves only while both sides read
// their queues.
func collect2(tb testing.TB, a *rdma.Endpoint, na int, b *rdma.Endpoint, nb int) (ca, cb []rdma.Completion) {
	tb.Helper()
	var errB error
	done := make(chan struct{})
	go func() {
		defer close(done)
		cb, errB = gather(b, nb)
	}()
	ca, errA := gather(a, na)
	<-done
	if errA != nil || errB != nil {
		tb.Fatalf("first side: %v; second side: %v", errA, errB)
	}
	return ca, cb
}

// progress polls e in the background until the returned stop is called (or
// cleanup), failing the test if a completion arrives: software providers
// serve one-sided operations only while the target endpoint's queues are
// being read (see doc.go), as a server's receive loop does.
func progress(tb testing.TB, e *rdma.Endpoint) (stop func()) {
	tb.Helper()
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		var buf [8]rdma.Completion
		for {
			select {
			case <-quit:
				return
			default:
			}
			n, err := e.Wait(buf[:], 10*time.Millisecond)
			if n > 0 {
				tb.Errorf("progress: unexpected completion %+v", buf[0])
			}
			if err != nil && !errors.Is(err, rdma.ErrTimeout) {
				return
			}
		}
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			close(quit)
			<-done
		})
	}
	tb.Cleanup(stop)
	return stop
}

// callersDo runs callers goroutines at once, each calling f for its
// requests 0..each-1 in order and stopping at its first error; every error
// fails t, named by caller and request. It returns when all have finished.
func callersDo(t *testing.T, callers, each int, f func(g, i int) error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, callers)
	for g := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if err := f(g, i); err != nil {
					errs <- fmt.Errorf("caller %d request %d: %w", g, i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
