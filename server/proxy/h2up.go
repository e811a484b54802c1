package proxy

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	phttp "github.com/simdedge/simdedge/parse/http"
	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/upstream"
)

// HTTP/2 upstreams (issue 21): targets written h2c://host:port (HTTP/2
// with prior knowledge over TCP, RFC 9113 §3.3) or h2://host:port (over
// TLS with ALPN h2, with the upstream's tls block). Framing, HPACK, flow
// control and stream multiplexing are Go's HTTP/2 client (x/net/http2's,
// which net/http bundles) behind net/http.ClientConn: one or a few per
// target, made with (*http.Transport).NewClientConn, which opens exactly one
// connection outside the Transport's pool, dialed by this file
// (DialContext/DialTLSContext, so the target's TLS config, session cache
// and handshake-failure classification are the HTTP/1.1 path's). So the
// Transport's own pool and retries never run, and the policy stays in
// charge. x/net's own http2.Transport.NewClientConn and http2.ClientConn
// are deprecated in favour of these since Go 1.26 (staticcheck refuses
// them); the frames and HPACK underneath are the same code. Each request
// drives its attempts through the attempt driver exactly as HTTP/1.1 does
// (upstream.Attempt: the balancer, health, and max_conns_per_target, which
// here caps the streams in flight to the target across its connections;
// the retry decision after a failure or a 5xx); a connect failure fails
// over, as for HTTP/1.1. A target's connections live on its *target (the pool's
// Slot), so they follow it across reloads.
//
// The request head forwarded is the one appendHead writes for HTTP/1.1
// (hop-by-hop fields removed, X-Forwarded-*, Via, and whatever rewriting
// appendHead does), parsed back into header fields: so the rules exist
// once. Bodies stream both ways; a response without a length is relayed
// chunked, and its trailers reach a client that sent "TE: trailers"
// (server.ResponseWriter.EnableTrailers), which is what gRPC's
// grpc-status needs from an HTTP/1.1 client. "TE: trailers" is sent
// upstream when the client sent it. Such upstreams are proxied on
// goroutines on every engine (LoopProxy returns nil: the loop's upstream
// sockets speak HTTP/1.1 only).

// h2Conns are a target's HTTP/2 connections.
type h2Conns struct {
	mu    sync.Mutex
	conns []*http.ClientConn
	// dialing serializes dials, so that a burst of requests to a target
	// without a usable connection opens one, not one each.
	dialing sync.Mutex
}

// h2Up is an upstream's HTTP/2 side.
type h2Up struct {
	tr  *http.Transport
	tls bool
	// byAddr finds the target a dial is for (its TLS config).
	byAddr map[string]*target
}

// h2PingAfter is how long a connection may stay silent before the
// transport pings it, and h2PingTimeout how long the ping may take before
// the connection is closed: a target that vanished without a FIN is found
// within a minute, not at the next request's timeout.
const (
	h2PingAfter   = 30 * time.Second
	h2PingTimeout = 15 * time.Second
	// h2CopyBuf is the size of a body copy's buffer, each way: twice
	// HTTP/2's default frame size (16 KiB), so a read usually takes whole
	// DATA frames.
	h2CopyBuf = 32 << 10
	// h2ALPN is HTTP/2's ALPN protocol ID (RFC 9113 §3.2).
	h2ALPN = "h2"
)

var (
	errH2ALPN   = errors.New("proxy: h2 upstream did not negotiate h2 by ALPN")
	errH2Dial   = errors.New("proxy: h2 upstream connection failed")
	errH2Head   = errors.New("proxy: h2 upstream request head")
	errH2Timer  = errors.New("proxy: h2 upstream response header timeout")
	errH2Target = errors.New("proxy: h2 dial for an unknown target")
)

func newH2Up(o UpstreamOptions) *h2Up {
	h := &h2Up{tls: o.TLS != nil, byAddr: map[string]*target{}}
	maxHead := o.MaxResponseHeaderBytes
	if maxHead <= 0 {
		maxHead = phttp.DefaultMaxHeaderBytes
	}
	tr := &http.Transport{
		// The same bound as an HTTP/1.1 response head (net/http's
		// default would be 10 MiB); HTTP/2 advertises it as
		// SETTINGS_MAX_HEADER_LIST_SIZE, and it covers trailers too.
		MaxResponseHeaderBytes: int64(maxHead),
		IdleConnTimeout:        o.IdleConnTimeout,
		HTTP2:                  &http.HTTP2Config{SendPingTimeout: h2PingAfter, PingTimeout: h2PingTimeout},
		Protocols:              new(http.Protocols),
		// The connect timeout is the context's (conn).
		DialContext: (&net.Dialer{}).DialContext,
		DialTLSContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			t := h.byAddr[addr]
			if t == nil {
				return nil, errH2Target
			}
			return dialH2TLS(ctx, t)
		},
	}
	if h.tls {
		tr.Protocols.SetHTTP2(true)
	} else {
		tr.Protocols.SetUnencryptedHTTP2(true) // prior knowledge
	}
	h.tr = tr
	return h
}

// dialH2TLS dials t with its TLS config (ALPN h2, set by NewUpstream) and
// refuses a server that did not choose h2.
func dialH2TLS(ctx context.Context, t *target) (net.Conn, error) {
	cfg := t.tlsc.Load()
	if cfg == nil {
		return nil, errH2Target
	}
	dl, ok := ctx.Deadline()
	timeout := DefaultConnectTimeout
	if ok {
		timeout = time.Until(dl)
	}
	tc, err := dialTLSContext(ctx, t.addr, cfg, timeout)
	if err != nil {
		return nil, err
	}
	if tc.ConnectionState().NegotiatedProtocol != h2ALPN {
		tc.Close()
		return nil, &handshakeError{errH2ALPN}
	}
	return tc, nil
}

// scheme is the scheme NewClientConn is asked for.
func (h *h2Up) scheme() string {
	if h.tls {
		return "https"
	}
	return "http"
}

// conn returns a connection of t with a stream reserved for one
// RoundTrip (or Release), dialing one if none has room (connect bounds the
// dial and handshake).
func (h *h2Up) conn(t *target, connect time.Duration) (*http.ClientConn, error) {
	if cc := t.h2.reserve(); cc != nil {
		return cc, nil
	}
	t.h2.dialing.Lock()
	defer t.h2.dialing.Unlock()
	if cc := t.h2.reserve(); cc != nil {
		return cc, nil // another request dialed meanwhile
	}
	ctx, cancel := context.WithTimeout(context.Background(), connect)
	defer cancel()
	cc, err := h.tr.NewClientConn(ctx, h.scheme(), t.addr)
	if err != nil {
		return nil, &dialError{errors.Join(errH2Dial, err)}
	}
	if err := cc.Reserve(); err != nil {
		cc.Close()
		return nil, &dialError{errors.Join(errH2Dial, err)}
	}
	t.h2.mu.Lock()
	t.h2.conns = append(t.h2.conns, cc)
	t.h2.mu.Unlock()
	return cc, nil
}

// reserve returns a connection on which a stream was reserved, and
// forgets those that failed.
func (hc *h2Conns) reserve() *http.ClientConn {
	hc.mu.Lock()
	defer hc.mu.Unlock()
	keep := hc.conns[:0]
	var found *http.ClientConn
	for _, cc := range hc.conns {
		if cc.Err() != nil {
			cc.Close()
			continue
		}
		keep = append(keep, cc)
		if found == nil && cc.Available() > 0 && cc.Reserve() == nil {
			found = cc
		}
	}
	clear(hc.conns[len(keep):])
	hc.conns = keep
	return found
}

// closeIdle closes the connections without streams and the others when
// their last stream ends (a target that went down, or retired).
func (hc *h2Conns) closeIdle() {
	hc.mu.Lock()
	conns := hc.conns
	hc.conns = nil
	hc.mu.Unlock()
	for _, cc := range conns {
		cc.SetStateHook(func(cc *http.ClientConn) {
			if cc.InFlight() == 0 {
				cc.Close()
			}
		})
		if cc.InFlight() == 0 {
			cc.Close()
		}
	}
}

// serveH2 proxies r to an HTTP/2 upstream.
func (p *Proxy) serveH2(w *server.ResponseWriter, r *server.Request) {
	head := r.Head()
	pool := p.up.pool
	key := pool.Key(r)
	// The body streams from the transport's goroutine as the upstream
	// takes it, while the response may already flow back (full duplex,
	// as gRPC streams need). Only with Expect: 100-continue are its
	// first bytes read here first, on the handler's goroutine: that read
	// sends the 100 Continue, which must not race with the response.
	var pre []byte
	preEOF := head.Body == phttp.BodyNone
	if !preEOF && head.Expect100 {
		bp := bufPool.Get().(*[]byte)
		defer bufPool.Put(bp)
		n, eof, err := readUpTo(r.Body(), *bp, false)
		if err != nil {
			p.respondError(w, server.StatusFor(err), "bad request body\n")
			w.SetClose()
			return
		}
		pre, preEOF = (*bp)[:n], eof
	}
	req, err := p.h2Request(r, head)
	if err != nil {
		p.respondError(w, 400, "bad request\n")
		return
	}
	// a drives the attempts (upstream.Attempt). A body streams as the
	// upstream takes it: once sent, it cannot go again.
	var a upstream.Attempt
	a.Begin(pool, key, upstream.IdempotentMethod(head.Method), hasIdempotencyKey(head), nil, 0)
	defer a.Finish()
	if head.Body != phttp.BodyNone {
		a.BodyStreamed()
	}
	start := time.Now()
	for {
		if a.Next(time.Since(start)) != upstream.StepGo {
			p.answer(w, &a)
			return
		}
		t := targetOf(a.Target())
		left := a.Left()
		var step upstream.Step
		if cc, err := p.up.h2.conn(t, min(p.up.connect, left)); err != nil {
			step = a.Failed(time.Since(start), upstream.Failure{Err: err, Kind: kindOf(err), Fresh: true})
		} else {
			step = p.h2Exchange(w, r, req, head, pre, preEOF, cc, &a, start, min(p.up.header, left))
		}
		switch step {
		case upstream.StepAnswer:
			// An upstream's reset of the stream is passed on to a
			// client that came over HTTP/2 (h2reset.go).
			if rep := a.Reply(); (rep == upstream.BadGateway || rep == upstream.GatewayTimeout) && p.forwardReset(w, r, a.Err()) {
				return
			}
			p.answer(w, &a)
			return
		case upstream.StepRetry:
			p.backoff(a.Backoff())
		case upstream.StepRelay:
			return // answered
		}
	}
}

// h2Request builds the request to forward from the head appendHead
// writes (its rules apply unchanged), parsed back into fields. The body is
// set per exchange.
func (p *Proxy) h2Request(r *server.Request, head *phttp.Request) (*http.Request, error) {
	kind, length := head.Body, head.ContentLength
	raw := p.appendHead(nil, r, head, kind, length)
	var fwd phttp.Request
	parser := phttp.NewParser(phttp.Options{MaxHeaderBytes: len(raw) + 1, OnlyChunked: true})
	if _, err := parser.ParseRequest(raw, &fwd); err != nil {
		return nil, errors.Join(errH2Head, err)
	}
	scheme := "http"
	if p.up.h2.tls {
		scheme = "https"
	}
	u, err := url.ParseRequestURI(string(fwd.Target))
	if err != nil {
		return nil, errors.Join(errH2Head, err)
	}
	u.Scheme, u.Host = scheme, string(fwd.Host)
	req := &http.Request{Method: string(fwd.Method), URL: u, Host: string(fwd.Host),
		Proto: "HTTP/2.0", ProtoMajor: 2, Header: make(http.Header, len(fwd.Headers))}
	for _, h := range fwd.Headers {
		if phttp.EqualFold(h.Name, "Host") || phttp.EqualFold(h.Name, "Content-Length") ||
			phttp.EqualFold(h.Name, "Transfer-Encoding") {
			continue // pseudo-header and framing: the transport's
		}
		name := http.CanonicalHeaderKey(string(h.Name))
		req.Header[name] = append(req.Header[name], string(h.Value))
	}
	if clientAcceptsTrailers(head) {
		req.Header["Te"] = []string{"trailers"} // the only TE HTTP/2 allows
	}
	switch kind {
	case phttp.BodyLength:
		req.ContentLength = length
	case phttp.BodyChunked:
		req.ContentLength = -1
	}
	return req, nil
}

// clientAcceptsTrailers: the client's TE field lists "trailers".
func clientAcceptsTrailers(head *phttp.Request) bool {
	hs := head.Headers
	for i := hs.Index("TE", 0); i >= 0; i = hs.Index("TE", i+1) {
		if listHas(hs[i].Value, []byte("trailers")) {
			return true
		}
	}
	return false
}

// h2Body is the client's request body as the transport reads it, from its
// own goroutine: pre first, then the client connection. stop makes later
// reads fail and waits out a read in progress, so nothing touches the
// client connection after the handler returns.
type h2Body struct {
	mu      sync.Mutex
	pre     []byte
	eof     bool
	src     io.Reader
	stopped bool
	err     error // the client body's own failure
}

var errH2BodyStopped = errors.New("proxy: request body no longer read")

func (b *h2Body) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopped {
		return 0, errH2BodyStopped
	}
	if len(b.pre) > 0 {
		n := copy(p, b.pre)
		b.pre = b.pre[n:]
		return n, nil
	}
	if b.eof {
		return 0, io.EOF
	}
	n, err := b.src.Read(p)
	if err == io.EOF {
		b.eof = true
	} else if err != nil {
		b.err = err
	}
	return n, err
}

func (b *h2Body) Close() error { return nil }

// stop ends the body's reads and reports whether the client's body was
// read to its end.
func (b *h2Body) stop() (complete bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.stopped = true
	return b.eof && len(b.pre) == 0
}

// h2Exchange sends req on cc and relays the response: StepRelay once the
// response was relayed (or abandoned), else the driver's step after the
// attempt failed or answered a status the policy retries. header bounds
// the wait for the response head; start is when the request started.
func (p *Proxy) h2Exchange(w *server.ResponseWriter, r *server.Request, tmpl *http.Request, head *phttp.Request,
	pre []byte, preEOF bool, cc *http.ClientConn, a *upstream.Attempt, start time.Time, header time.Duration) upstream.Step {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// An HTTP/2 client that resets its stream (a cancelled gRPC call)
	// or loses its connection cancels the upstream stream too.
	var gone atomic.Bool
	r.OnStreamGone(func() { gone.Store(true); cancel() })
	req := tmpl.WithContext(ctx)
	var body *h2Body
	if head.Body != phttp.BodyNone {
		body = &h2Body{pre: pre, eof: preEOF, src: r.Body()}
		req.Body = body
	}
	defer func() {
		if body != nil && !body.stop() {
			// The upstream answered before the client's body ended:
			// the rest is unread, so the client connection cannot
			// carry another request.
			w.SetClose()
		}
	}()
	// The response-header timeout: the transport has none of its own
	// for a ClientConn, so a timer cancels the stream.
	timedOut := make(chan struct{})
	timer := time.AfterFunc(header, func() { close(timedOut); cancel() })
	resp, err := cc.RoundTrip(req)
	if !timer.Stop() {
		select {
		case <-timedOut:
			err = errors.Join(errH2Timer, errTimeout{})
		default:
		}
	}
	since := func() time.Duration { return time.Since(start) }
	if err != nil {
		// HTTP/2 sends the head before anything can fail: written.
		f := upstream.Failure{Err: err, Kind: h2Kind(err), Written: true, Fresh: true}
		switch {
		case gone.Load():
			f.Kind = upstream.Gone // nobody to answer
		case body != nil && body.err != nil:
			f.Err, f.Kind = body.err, upstream.ClientBody
		}
		return a.Failed(since(), f)
	}
	defer resp.Body.Close()
	if step := a.Head(resp.StatusCode, since); step != upstream.StepRelay {
		return step // a retried response is dropped
	}
	if err := p.h2Relay(w, r, resp, head); err != nil {
		res := upstream.Result{Outcome: h2Kind(err).Outcome()}
		if gone.Load() {
			res = upstream.Result{Outcome: upstream.Canceled}
		}
		a.End(res)
		return upstream.StepRelay
	}
	// Answered (a client that went away mid-body is not the target's
	// failure).
	a.End(upstream.StatusResult(resp.StatusCode))
	return upstream.StepRelay
}

// errTimeout is a net.Error timeout, so timeoutError answers 504.
type errTimeout struct{}

func (errTimeout) Error() string   { return "proxy: timeout" }
func (errTimeout) Timeout() bool   { return true }
func (errTimeout) Temporary() bool { return true }

// h2Relay sends resp to the client: status, fields, the body as it
// arrives (flushed after every read, so streams such as gRPC's flow), then
// the trailers. It returns the upstream's failure mid-body (after which
// the client's stream is reset with the upstream's code when it is one to
// pass on, else cut short); a client that stopped reading ends it early
// with nil.
func (p *Proxy) h2Relay(w *server.ResponseWriter, r *server.Request, resp *http.Response, head *phttp.Request) error {
	w.WriteHeader(resp.StatusCode)
	for name, vs := range resp.Header {
		if isHopByHop([]byte(name)) || name == "Content-Length" || name == "Via" {
			continue
		}
		for _, v := range vs {
			w.AddHeader(name, v)
		}
	}
	via := "2 " + p.via
	if v := resp.Header.Get("Via"); v != "" {
		via = v + ", " + via
	}
	w.AddHeader("Via", via)
	isHead := string(head.Method) == "HEAD"
	switch {
	case isHead && resp.ContentLength >= 0:
		w.SetContentLength(resp.ContentLength)
	case isHead:
	case resp.ContentLength >= 0 && len(resp.Trailer) == 0:
		w.SetContentLength(resp.ContentLength)
	default:
		// A body of unknown length is a stream (gRPC, server-sent
		// events): the head goes now, not with the first bytes, which
		// may wait for the client's next message.
		w.EnableTrailers()
		if err := w.Flush(); err != nil {
			return nil // the client went away
		}
	}
	bp := h2Bufs.Get().(*[]byte)
	defer h2Bufs.Put(bp)
	buf := *bp
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return nil // the client went away
			}
			if werr := w.Flush(); werr != nil {
				return nil
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			if !p.forwardReset(w, r, err) {
				p.bodyFailed(w)
			}
			return err
		}
	}
	for name, vs := range resp.Trailer {
		for _, v := range vs {
			w.AddTrailer([]byte(name), []byte(v))
		}
	}
	return nil
}

var h2Bufs = sync.Pool{New: func() any { b := make([]byte, h2CopyBuf); return &b }}

// probeH2 is the active check of an HTTP/2 target: GET of the check's
// path on a new connection, spoken as requests reach the target (h2c, or
// TLS with ALPN h2), so that a backend that speaks only HTTP/2 is not
// judged by an HTTP/1.1 request.
func (u *Upstream) probeH2(ctx context.Context, t *target) (int, error) {
	dctx, cancel := context.WithTimeout(ctx, u.connect)
	cc, err := u.h2.tr.NewClientConn(dctx, u.h2.scheme(), t.addr)
	cancel()
	if err != nil {
		return 0, err
	}
	defer cc.Close()
	path := "/"
	if u.opts.Active != nil && u.opts.Active.Path != "" {
		path = u.opts.Active.Path
	}
	req, err := http.NewRequestWithContext(ctx, "GET", u.h2.scheme()+"://"+t.addr+path, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("User-Agent", probeUserAgent)
	resp, err := cc.RoundTrip(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}
