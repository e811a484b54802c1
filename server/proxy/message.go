package proxy

import (
	"errors"
	"sync"
	"time"

	phttp "github.com/simdedge/simdedge/parse/http"
	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/upstream"
)

// MessageTarget is an upstream reached by messages instead of a byte
// stream: the whole request goes out as one message, the response comes
// back as one or more messages (RDMA send/receive queues; see package
// rdma). The transport packages implement it; this package never imports
// them (internal/layers), and the configuration resolves target URLs such
// as "rdma://10.0.0.2:7471?provider=verbs" to implementations through
// config.BuildOptions.Schemes.
//
// Implementations connect lazily and reconnect after a failure, and are
// safe for concurrent use: several exchanges may be in flight at once
// (pipelined, up to the transport's own limit, beyond which RoundTrip
// waits).
type MessageTarget interface {
	// RoundTrip sends req (an HTTP/1.1 request: head and whole body) and
	// calls part with each piece of the response, in order; more reports
	// whether pieces follow. A piece is only valid during the call (it is
	// typically a view of a registered receive buffer); a part error
	// abandons the exchange and is returned. timeout bounds the wait for
	// each piece (0: no limit); on expiry the error has a Timeout method
	// that returns true.
	RoundTrip(req []byte, timeout time.Duration, part func(b []byte, more bool) error) error
	// Close closes the connections; RoundTrips in flight fail.
	Close() error
}

var (
	// ErrMixedTargets: an upstream whose targets are partly stream
	// (host:port) and partly message targets.
	ErrMixedTargets = errors.New("proxy: an upstream's targets must be all host:port or all message targets")
	// errShortResponse: the message target's response ended before its
	// head or body did.
	errShortResponse = errors.New("proxy: upstream response ended early")
)

// msgExchange parses a response arriving in pieces and streams it to the
// client: the head is gathered in buf until it parses, body bytes are
// written through as they come (Content-Length), or decoded in buf
// (chunked).
type msgExchange struct {
	p      *Proxy
	w      *server.ResponseWriter
	isHead bool
	buf    []byte
	out    []byte
	resp   phttp.Response
	dec    phttp.ChunkedDecoder
	len    phttp.LengthDecoder
	// headDone: the head was parsed and written to w; bodyDone: the body
	// is complete (bytes after it are an upstream error).
	headDone, bodyDone bool
	started            bool // some piece arrived
	// a drives the request's attempts; start is when the request
	// started; retried: the attempt's status is one the policy retries.
	a       upstream.Attempt
	start   time.Time
	retried bool
}

var msgExchangePool = sync.Pool{New: func() any { return &msgExchange{} }}

// maxMsgPooled bounds the buffers an exchange keeps in the pool kept between exchanges.
const maxMsgPooled = 1 << 20

// serveMessage forwards r to a message target chosen by the pool. The
// request body is read whole (the message transport moves large bodies by
// rendezvous). The response streams to the client as its pieces arrive, so
// only an attempt that failed before its first piece, or whose status the
// policy retries (decided before the head is written), is retried (a
// message transport does not tell a connect failure from a later one, so
// every failure counts as written).
func (p *Proxy) serveMessage(w *server.ResponseWriter, r *server.Request) {
	head := r.Head()
	var body []byte
	if head.Body != phttp.BodyNone {
		b, err := r.BodyBytes()
		if err != nil {
			p.respondError(w, server.StatusFor(err), "bad request body\n")
			w.SetClose()
			return
		}
		body = b
	}
	x := msgExchangePool.Get().(*msgExchange)
	defer func() {
		if cap(x.buf) > maxMsgPooled {
			x.buf = nil
		}
		if cap(x.out) > maxMsgPooled {
			x.out = nil
		}
		x.w, x.p, x.a = nil, nil, upstream.Attempt{}
		msgExchangePool.Put(x)
	}()
	x.p, x.w, x.isHead = p, w, string(head.Method) == "HEAD"
	// A bodiless request goes with "Content-Length: 0": harmless, and the
	// backend need not tell framing from the message boundary.
	x.out = p.appendHead(x.out[:0], r, head, phttp.BodyLength, int64(len(body)))
	x.out = append(x.out, body...)
	pool := p.up.pool
	// x.a drives the attempts (upstream.Attempt). A message transport
	// has no pooled connection to go stale and does not tell a connect
	// failure from a later one: every failure counts as written, on a
	// fresh connection.
	a := &x.a
	a.Begin(pool, pool.Key(r), upstream.IdempotentMethod(head.Method), hasIdempotencyKey(head), nil, 0)
	defer a.Finish()
	x.start = time.Now()
	for {
		if a.Next(time.Since(x.start)) != upstream.StepGo {
			p.answer(w, a)
			return
		}
		ut := a.Target()
		t := targetOf(ut)
		r.SetUpstream(pool.Name(), ut.Address())
		x.headDone, x.bodyDone, x.started, x.retried = false, false, false, false
		x.buf = x.buf[:0]
		err := t.mt.RoundTrip(x.out, p.up.header, x.part)
		if err == nil && !x.bodyDone {
			err = errShortResponse
		}
		if err == nil || x.headDone {
			a.End(upstream.StatusResult(x.resp.Status))
			if err != nil {
				p.log.Warn("upstream failed mid-body", "upstream", p.up.opts.Name, "target", t.addr, "err", err)
				p.bodyFailed(w)
			}
			return
		}
		step := upstream.StepRetry // x.retried: a status the policy retries
		if !x.retried {
			if x.started {
				err = errors.Join(errBadResponse, err)
			}
			step = a.Failed(time.Since(x.start), upstream.Failure{Err: err, Kind: upstream.Classify(err, false),
				Written: true, Fresh: true})
		}
		switch step {
		case upstream.StepAnswer:
			p.answer(w, a)
			return
		case upstream.StepRetry:
			p.backoff(a.Backoff())
		}
	}
}

// since is the time since the request started, on the driver's clock.
func (x *msgExchange) since() time.Duration { return time.Since(x.start) }

// part is the RoundTrip callback.
func (x *msgExchange) part(b []byte, more bool) error {
	x.started = true
	if !x.headDone {
		x.buf = append(x.buf, b...)
		var n int
		var err error
		if x.isHead {
			n, err = x.p.up.parser.ParseHEADResponse(x.buf, &x.resp)
		} else {
			n, err = x.p.up.parser.ParseResponse(x.buf, &x.resp)
		}
		if err == phttp.ErrNeedMore {
			if !more {
				return errShortResponse
			}
			return nil
		}
		if err != nil {
			return errors.Join(errBadResponse, err)
		}
		s := x.resp.Status
		switch {
		case s == 101:
			return errUpgrade
		case s < 200:
			// An interim response: drop it and parse what follows.
			x.buf = append(x.buf[:0], x.buf[n:]...)
			return x.part(nil, more)
		}
		if x.a.Head(s, x.since) == upstream.StepRetry {
			// Dropped before anything of it reached the client.
			x.retried = true
			return upstream.ErrRetriedStatus
		}
		// The head is written before the body starts; the body views in
		// x.buf stay valid because x.buf is not appended to again.
		x.out = x.p.writeResponseHead(x.w, &x.resp, x.out[:0], x.isHead)
		x.headDone = true
		switch {
		case x.isHead || x.resp.Body == phttp.BodyNone:
			x.bodyDone = true
			return nil
		case x.resp.Body == phttp.BodyLength:
			x.len.Reset(x.resp.ContentLength)
			if x.resp.ContentLength == 0 {
				x.bodyDone = true
			}
		case x.resp.Body == phttp.BodyChunked:
			x.dec.Reset()
		}
		rest := x.buf[n:]
		x.buf = x.buf[:0]
		return x.body(rest, more)
	}
	return x.body(b, more)
}

// body streams body bytes to the client.
func (x *msgExchange) body(b []byte, more bool) error {
	if len(b) > 0 && x.bodyDone {
		return errBadResponse // bytes after the end of the body
	}
	switch x.resp.Body {
	case phttp.BodyLength:
		n, done := x.len.Decode(b)
		if n > 0 {
			if _, err := x.w.Write(b[:n]); err != nil {
				return err
			}
		}
		if done {
			x.bodyDone = true
			if n < len(b) {
				return errBadResponse
			}
		}
	case phttp.BodyChunked:
		// Decode in place in buf: the decoder needs whole chunk-size
		// lines, which may straddle pieces.
		x.buf = append(x.buf, b...)
		for len(x.buf) > 0 && !x.bodyDone {
			n, consumed, err := x.dec.Decode(x.buf)
			if n > 0 {
				if _, werr := x.w.Write(x.buf[:n]); werr != nil {
					return werr
				}
			}
			x.buf = append(x.buf[:0], x.buf[consumed:]...)
			if err == nil {
				x.bodyDone = true
				break
			}
			if err != phttp.ErrNeedMore {
				return errors.Join(errBadResponse, err)
			}
			if n == 0 && consumed == 0 {
				break
			}
		}
		if x.bodyDone && len(x.buf) > 0 {
			return errBadResponse
		}
	default: // BodyUntilClose: the end of the message sequence ends it
		if len(b) > 0 {
			if _, err := x.w.Write(b); err != nil {
				return err
			}
		}
		if !more {
			x.bodyDone = true
		}
	}
	if more && x.w.Written() > 0 {
		// Pass what arrived on before waiting for the next piece.
		return x.w.Flush()
	}
	return nil
}

// timeoutError reports whether err says it is a timeout (net.Error or any
// error with a Timeout method, as message targets return).
func timeoutError(err error) bool {
	var te interface{ Timeout() bool }
	return errors.As(err, &te) && te.Timeout()
}
