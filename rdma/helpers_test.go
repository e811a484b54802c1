//go:build rdma && cgo

package rdma_test

import (
	"errors"
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
	var got []rdma.Completion
	buf := make([]rdma.Completion, 64)
	deadline := time.Now().Add(10 * time.Second)
	for len(got) < want {
		if time.Now().After(deadline) {
			tb.Fatalf("%d of %d completions after 10 s", len(got), want)
		}
		n, err := e.Wait(buf[:min(len(buf), want-len(got))], time.Second)
		if err != nil && !errors.Is(err, rdma.ErrTimeout) {
			tb.Fatalf("Wait after %d of %d completions: %v", len(got), want, err)
		}
		got = append(got, buf[:n]...)
	}
	return got
}
