package proxy

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/simdedge/simdedge/server/upstream"
)

// Active health checks (upstream.Checker) probe a target over the same
// transport as requests: a new TCP connection with the connect timeout and
// an HTTP/1.1 GET of the check path for stream targets (over TLS for
// https targets, with the requests' config), a message round trip for
// message targets. They run on the checker's goroutines, never on an
// event loop. Only the status line is read: the verdict is the status.

// errProbe: the check's response was not an HTTP/1.x response.
var errProbe = errors.New("proxy: health check response malformed")

// probeUserAgent identifies checks in the targets' logs.
const probeUserAgent = "simdedge-health-check"

// probe is the upstream's upstream.Probe.
func (u *Upstream) probe(ctx context.Context, ut *upstream.Target) (int, error) {
	t := targetOf(ut)
	if t == nil {
		return 0, errProbe
	}
	req := u.probeRequest(t)
	if t.mt != nil {
		return probeMessage(ctx, t.mt, req)
	}
	if u.h2 != nil {
		return u.probeH2(ctx, t) // h2up.go
	}
	var nc net.Conn
	var err error
	if cfg := t.tlsc.Load(); cfg != nil {
		// An https target is checked over TLS, as requests reach it.
		nc, err = dialTLSContext(ctx, t.addr, cfg, u.connect)
	} else {
		d := net.Dialer{Timeout: u.connect}
		nc, err = d.DialContext(ctx, "tcp", t.addr)
	}
	if err != nil {
		return 0, err
	}
	defer nc.Close()
	if dl, ok := ctx.Deadline(); ok {
		nc.SetDeadline(dl)
	}
	// The context ending (the checker stopping) ends the exchange.
	stop := context.AfterFunc(ctx, func() { nc.SetDeadline(time.Now()) })
	defer stop()
	if _, err := nc.Write(req); err != nil {
		return 0, err
	}
	resp, err := http.ReadResponse(bufio.NewReader(nc), nil)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// probeRequest is the check's request: GET path, closing the connection.
func (u *Upstream) probeRequest(t *target) []byte {
	path := "/"
	if u.opts.Active != nil && u.opts.Active.Path != "" {
		path = u.opts.Active.Path
	}
	b := make([]byte, 0, len(path)+len(t.addr)+96)
	// A target that takes PROXY headers gets one that names no client
	// (v2 LOCAL, v1 UNKNOWN), as HAProxy's check-send-proxy sends.
	b = appendProxyHeader(b, u.opts.SendProxyProtocol, nil)
	b = append(b, "GET "...)
	b = append(b, path...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, t.addr...)
	b = append(b, "\r\nUser-Agent: "...)
	b = append(b, probeUserAgent...)
	b = append(b, "\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"...)
	return b
}

// probeMessage does the check as one message round trip; the status comes
// from the response's first piece.
func probeMessage(ctx context.Context, mt MessageTarget, req []byte) (int, error) {
	timeout := time.Duration(0)
	if dl, ok := ctx.Deadline(); ok {
		timeout = time.Until(dl)
	}
	status := 0
	err := mt.RoundTrip(req, timeout, func(b []byte, more bool) error {
		if status == 0 {
			status = parseStatusLine(b)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	if status == 0 {
		return 0, errProbe
	}
	return status, nil
}

// parseStatusLine returns the status of "HTTP/1.x NNN ...", or 0.
func parseStatusLine(b []byte) int {
	const prefix = len("HTTP/1.x ")
	if len(b) < prefix+3 || string(b[:7]) != "HTTP/1." || b[8] != ' ' {
		return 0
	}
	n := 0
	for _, c := range b[prefix : prefix+3] {
		if c < '0' || c > '9' {
			return 0
		}
		n = n*10 + int(c-'0')
	}
	return n
}
