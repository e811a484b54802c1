package main

import (
	"context"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/simdedge/simdedge/bench/internal/procstat"
)

const (
	// floodWaves and floodConns are the flood: three waves of 300.
	floodWaves = 3
	floodConns = 300
	// floodContentLength is the announced body, never sent: 10 MB each,
	// 3 GB for a wave if the server reserves it up front.
	floodContentLength = 10_000_000
	// rssSample is the interval of the VmRSS samples.
	rssSample = 100 * time.Millisecond
)

// runFlood: waves of connections that announce a large body and send none
// of it. The figures are the server's peak RSS, its RSS once the clients
// have gone, and its CPU over the flood.
func runFlood(ctx context.Context, o *options, v variant) row {
	r := row{scenario: "flood", v: v}
	p := paramsFor(o)
	s, err := startServer(ctx, o, v)
	if err != nil {
		r.result = "error: " + err.Error()
		return r
	}
	defer s.stop()
	base, err := procstat.Memory(s.pid())
	if err != nil {
		r.result = "error: " + err.Error()
		return r
	}
	cpu0, _ := procstat.CPUTime(s.pid())
	t0 := time.Now()

	// Sample VmRSS until the flood ends: VmHWM alone would do for the
	// peak, the samples show it was the flood's.
	stopSampling := make(chan struct{})
	var sampled int64
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(rssSample)
		defer tick.Stop()
		for {
			if m, err := procstat.Memory(s.pid()); err == nil {
				sampled = max(sampled, m.RSS)
			}
			select {
			case <-stopSampling:
				return
			case <-tick.C:
			}
		}
	})

	req := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n\r\n", echoPath, host, floodContentLength)
	opened, failed := 0, 0
	for w := 0; w < floodWaves && ctx.Err() == nil; w++ {
		conns := make([]net.Conn, 0, floodConns)
		for range floodConns {
			c, err := dialFrom(loopback, s.addr, dialTimeout)
			if err == nil {
				c.SetWriteDeadline(time.Now().Add(dialTimeout))
				_, err = c.Write([]byte(req))
			}
			if err != nil {
				failed++
				if c != nil {
					c.Close()
				}
				continue
			}
			opened++
			conns = append(conns, c)
		}
		select {
		case <-time.After(p.floodHold):
		case <-ctx.Done():
		}
		for _, c := range conns {
			c.Close()
		}
	}
	select {
	case <-time.After(p.floodSettle):
	case <-ctx.Done():
	}
	close(stopSampling)
	wg.Wait()
	after, err := procstat.Memory(s.pid())
	if err != nil {
		r.result = "error: " + err.Error()
		return r
	}
	cpu1, _ := procstat.CPUTime(s.pid())
	wall := time.Since(t0)
	peak := max(after.HWM, sampled)
	r.result = fmt.Sprintf("peak RSS %s, after %s", fmtMB(peak), fmtMB(after.RSS))
	r.notes = fmt.Sprintf("before %s; CPU %.0f %% over %s; %d of %d connections sent their head",
		fmtMB(base.RSS), 100*(cpu1-cpu0).Seconds()/wall.Seconds(), fmtSeconds(wall), opened, opened+failed)
	return r
}
