package main

import (
	"context"
	"fmt"
	"net"
	"sync"
	"time"
)

const (
	// trickleClients each send a body 1 byte every trickleEvery: the
	// issue's 200 clients, 1 byte per 5 s.
	trickleClients = 200
	trickleEvery   = 5 * time.Second
	// trickleContentLength is announced and never reached within the
	// bound (at 1 byte per 5 s). It is above the proxy's buffered-body
	// size (64 KiB), so that the proxy streams the body and connects to
	// the backend at the first byte, as it would for any large upload,
	// and below the default max_body_bytes (10 MiB).
	trickleContentLength = 1_000_000
	// backendSample is the interval of the backend connection count.
	backendSample = 500 * time.Millisecond
)

// runTrickle: bodies trickled 1 byte at a time to /echo or through the
// proxy. Each client's outcome, and on proxy routes the peak number of
// connections the backend holds.
func runTrickle(ctx context.Context, o *options, v variant) row {
	r := row{scenario: "trickle", v: v}
	bound := paramsFor(o).trickleBound
	s, err := startServer(ctx, o, v)
	if err != nil {
		r.result = "error: " + err.Error()
		return r
	}
	defer s.stop()
	head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n", v.path, host, trickleContentLength)
	outs := dripAll(ctx, s, trickleClients, []byte(head), trickleEvery, bound, func(tick <-chan time.Time, stop <-chan struct{}) int {
		peak := 0
		for {
			if n, err := s.backend.established(); err == nil {
				peak = max(peak, n)
			}
			select {
			case <-tick:
			case <-stop:
				return peak
			}
		}
	})
	r.result = summarize(outs.outcomes, bound)
	if v.path == proxyPath {
		r.notes = fmt.Sprintf("backend connections held: peak %d", outs.sampled)
	}
	return r
}

// dripResult is what dripAll saw.
type dripResult struct {
	outcomes []outcome
	// sampled is what the sampler returned.
	sampled int
}

// dripAll opens n connections, writes head on each and then one byte
// ('a') every interval, until the server answers or closes the connection,
// or bound passes. sample, if not nil, runs meanwhile on a ticker of
// backendSample and returns its figure when stop closes.
func dripAll(ctx context.Context, s *server, n int, head []byte, every, bound time.Duration, sample func(tick <-chan time.Time, stop <-chan struct{}) int) dripResult {
	var res dripResult
	res.outcomes = make([]outcome, n)
	stop := make(chan struct{})
	var sampleWG sync.WaitGroup
	if sample != nil {
		sampleWG.Go(func() {
			t := time.NewTicker(backendSample)
			defer t.Stop()
			res.sampled = sample(t.C, stop)
		})
	}
	var wg sync.WaitGroup
	for i := range n {
		start := time.Now()
		c, err := dialFrom(loopback, s.addr, dialTimeout)
		if err != nil {
			res.outcomes[i] = outcome{at: time.Since(start), failed: true}
			continue
		}
		wg.Go(func() {
			defer c.Close()
			res.outcomes[i] = drip(ctx, c, head, every, start, start.Add(bound))
		})
	}
	wg.Wait()
	close(stop)
	sampleWG.Wait()
	return res
}

// drip writes head and then a byte every interval on c while watching
// for the server's answer or close, until deadline.
func drip(ctx context.Context, c net.Conn, head []byte, every time.Duration, start, deadline time.Time) outcome {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		c.SetWriteDeadline(deadline)
		if _, err := c.Write(head); err != nil {
			return
		}
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				// Unblock the reader: the suite is stopping.
				c.SetReadDeadline(time.Now())
				return
			case <-t.C:
			}
			if _, err := c.Write([]byte{'a'}); err != nil {
				return
			}
		}
	})
	out := watch(c, start, deadline)
	close(done)
	wg.Wait()
	return out
}
