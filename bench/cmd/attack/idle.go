package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

const (
	// idleFillers is how many attacker connections are opened at once
	// while filling the server.
	idleFillers = 64
	// idleFillBound bounds the whole fill.
	idleFillBound = 60 * time.Second
	// idleRequestTimeout bounds one filler's request.
	idleRequestTimeout = 3 * time.Second
	// idleBound is how long the other client waits for its answer.
	idleBound = 10 * time.Second
	// idleMaxFailures ends the fill early: a server that refuses this
	// many of one address's connections (a per-address cap) is as full
	// as that address can make it, and waiting out the rest of the fill
	// would only stretch the suite.
	idleMaxFailures = 256
)

// runIdle: one address fills the server with idle keep-alive connections,
// then a client from another address asks for /echo.
func runIdle(ctx context.Context, o *options, v variant) row {
	r := row{scenario: "idle", v: v}
	s, err := startServer(ctx, o, v)
	if err != nil {
		r.result = "error: " + err.Error()
		return r
	}
	defer s.stop()

	req := []byte(fmt.Sprintf("GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", echoPath, host))
	var (
		mu    sync.Mutex
		conns []net.Conn
		next  atomic.Int64
		ok    atomic.Int64
		bad   atomic.Int64
		wg    sync.WaitGroup
	)
	fillDeadline := time.Now().Add(idleFillBound)
	t0 := time.Now()
	for range idleFillers {
		wg.Go(func() {
			for next.Add(1) <= int64(o.maxConns) && bad.Load() < idleMaxFailures && time.Now().Before(fillDeadline) && ctx.Err() == nil {
				c, err := dialFrom(loopback, s.addr, dialTimeout)
				if err != nil {
					bad.Add(1)
					continue
				}
				if !keepAliveRequest(c, req) {
					bad.Add(1)
					c.Close()
					continue
				}
				ok.Add(1)
				mu.Lock()
				conns = append(conns, c)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	fill := time.Since(t0)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()

	start := time.Now()
	var out outcome
	c, err := dialFrom(otherClient, s.addr, idleBound)
	if err != nil {
		out = outcome{at: time.Since(start), failed: true}
	} else {
		c.SetWriteDeadline(start.Add(idleBound))
		if _, err := c.Write(req); err != nil {
			out = outcome{at: time.Since(start)}
		} else {
			out = watch(c, start, start.Add(idleBound))
		}
		c.Close()
	}
	switch {
	case out.open:
		r.result = fmt.Sprintf("timeout (no answer in %s)", fmtSeconds(idleBound))
	case out.failed:
		r.result = fmt.Sprintf("connect failed after %s", fmtSeconds(out.at))
	case out.status == 0:
		r.result = fmt.Sprintf("closed without an answer after %s", fmtMillis(out.at))
	default:
		r.result = fmt.Sprintf("%d after %s", out.status, fmtMillis(out.at))
	}
	r.notes = fmt.Sprintf("%d of %d idle connections from %s served, %d refused (filled in %s); the new client is %s",
		ok.Load(), o.maxConns, loopback, bad.Load(), fmtSeconds(fill), otherClient)
	return r
}

// keepAliveRequest sends req on c and reads the whole response, leaving c
// an idle keep-alive connection. It reports whether that worked.
func keepAliveRequest(c net.Conn, req []byte) bool {
	c.SetDeadline(time.Now().Add(idleRequestTimeout))
	defer c.SetDeadline(time.Time{})
	if _, err := c.Write(req); err != nil {
		return false
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return false
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return err == nil && resp.StatusCode == http.StatusOK && !resp.Close
}

// fmtMillis prints a short duration in ms, a long one in s.
func fmtMillis(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
	}
	return fmtSeconds(d)
}
