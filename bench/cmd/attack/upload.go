package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

const (
	// uploadSize at uploadRate is the upload: 9 MB at 200 KB/s,
	// about 45 s, longer than the default response_header timeout (30 s).
	uploadSize = 9_000_000
	uploadRate = 200_000
	// quickUploadSize is -quick's upload: 10 s.
	quickUploadSize = 2_000_000
	// uploadTick is the pacing interval: one write of rate/10 bytes.
	uploadTick = 100 * time.Millisecond
	// defaultResponseHeader is simdedge's default upstream
	// response_header timeout, which the full upload outlasts.
	defaultResponseHeader = 30 * time.Second
	// uploadSlack is the wait for the answer beyond the upload's own
	// duration: more than the default response_header timeout, so that a
	// server that applies it late still answers within the bound.
	uploadSlack = 45 * time.Second
)

// runUpload: a body sent slowly through the proxy to a healthy backend.
func runUpload(ctx context.Context, o *options, v variant) row {
	r := row{scenario: "upload", v: v}
	size := paramsFor(o).uploadSize
	s, err := startServer(ctx, o, v)
	if err != nil {
		r.result = "error: " + err.Error()
		return r
	}
	defer s.stop()
	c, err := dialFrom(loopback, s.addr, dialTimeout)
	if err != nil {
		r.result = "error: " + err.Error()
		return r
	}
	defer c.Close()
	// An interrupted suite unblocks the read below.
	defer context.AfterFunc(ctx, func() { c.Close() })()

	start := time.Now()
	var sent atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/octet-stream\r\nContent-Length: %d\r\n\r\n", proxyPath, host, size)
		if _, err := c.Write([]byte(head)); err != nil {
			return
		}
		chunk := make([]byte, uploadRate*int(uploadTick)/int(time.Second))
		for i := range chunk {
			chunk[i] = 'x'
		}
		for n := 0; n < size; {
			// Paced from the start, so that slow writes do not add up.
			due := start.Add(time.Duration(n) * time.Second / uploadRate)
			select {
			case <-stop:
				return
			case <-ctx.Done():
				return
			case <-time.After(time.Until(due)):
			}
			k := min(len(chunk), size-n)
			w, err := c.Write(chunk[:k])
			n += w
			sent.Store(int64(n))
			if err != nil {
				return
			}
		}
	})

	bound := time.Duration(size)*time.Second/uploadRate + uploadSlack
	c.SetReadDeadline(start.Add(bound))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	took := time.Since(start)
	close(stop)
	c.Close()
	wg.Wait()
	if err != nil {
		r.result = fmt.Sprintf("no answer after %s", fmtSeconds(took))
	} else {
		resp.Body.Close()
		r.result = fmt.Sprintf("%d after %s", resp.StatusCode, fmtSeconds(took))
	}
	r.notes = fmt.Sprintf("%s of %s sent at %d KB/s", fmtMB(sent.Load()), fmtMB(int64(size)), uploadRate/1000)
	if d := time.Duration(size) * time.Second / uploadRate; d < defaultResponseHeader {
		r.notes += fmt.Sprintf("; the upload (%s) is shorter than the default response_header timeout (%s), so it does not test it", fmtSeconds(d), fmtSeconds(defaultResponseHeader))
	}
	return r
}
