package server

import (
	"sync"
	"time"

	phttp "github.com/simdedge/simdedge/parse/http"
	"github.com/simdedge/simdedge/server/accesslog"
)

// exchange is the state of one message request: the counterpart of conn
// for message transports, pooled so a warm server allocates nothing.
type exchange struct {
	srv *Server
	// cfg are the server's settings when the message arrived
	// (reconfigure.go).
	cfg  *settings
	m    Message
	out  []byte
	req  Request
	resp ResponseWriter
	dec  phttp.ChunkedDecoder
	// envHead is the HTTP/1.1 head written from a request envelope, so
	// that the parser checks it (message_envelope.go); reused.
	envHead []byte
	sent    bool // some reply went out
	done    bool // the last reply went out
	// inline makes the exchange serve only what its plan can serve
	// without blocking (message_inline.go); declined says it could not
	// and the message was left untouched for a goroutine.
	inline   bool
	declined bool
	// alog is its access-log shard, taken from alogOf's log
	// (observe.go).
	alog   *accesslog.Shard
	alogOf *accesslog.Log
}

var exchangePool = sync.Pool{New: func() any {
	x := &exchange{}
	x.resp.sink = x
	x.resp.req = &x.req
	x.resp.encs.w = &x.resp
	x.resp.out = &x.out
	return x
}}

// ServeMessages receives request messages from l and serves each on its
// own goroutine, at most Limits.MaxConns at once, until l fails or the
// server shuts down. The body must be whole in the message (framed by
// Content-Length or chunked inside it); bodies continued in later messages
// or fetched by RDMA READ are not implemented yet and get 413. A message
// that carries a FlatBuffers request envelope (EnvelopeMessage) is checked
// as strictly as HTTP/1.1 and served by the same handler. When l is an
// InlineMessageListener and the Handler an Inliner, the requests the
// Inliner offers a handler for are served on the transport's receiving
// goroutine instead (see InlineMessageListener).
func (s *Server) ServeMessages(l MessageListener) error {
	if !s.track(l, l.Close) {
		l.Close()
		return ErrServerClosed
	}
	defer s.untrack(l)
	defer l.Close()
	if il, ok := l.(InlineMessageListener); ok {
		if s.inlines() {
			il.SetInline(s.serveInline())
			defer il.SetInline(nil)
		}
	}
	var slots chan struct{}
	if n := s.opts.Limits.MaxConns; n > 0 {
		slots = make(chan struct{}, n)
	}
	for {
		if slots != nil {
			slots <- struct{}{}
		}
		m, err := l.Receive()
		if err != nil {
			if slots != nil {
				<-slots
			}
			if s.closing.Load() {
				return ErrServerClosed
			}
			return err
		}
		// Add under mu, as addConn does: Shutdown sets closing under mu
		// before it waits, so no Add can follow its Wait.
		s.mu.Lock()
		if s.closing.Load() {
			s.mu.Unlock()
			m.Release()
			if slots != nil {
				<-slots
			}
			return ErrServerClosed
		}
		s.active.Add(1)
		s.mu.Unlock()
		go func() {
			s.serveMessage(m)
			if slots != nil {
				<-slots
			}
			s.active.Done()
		}()
	}
}

func (s *Server) serveMessage(m Message) { s.serveMessageWith(m, false) }

// serveMessageWith serves m on this goroutine. With inl set it serves m
// only when m is refused before any handler runs or inl offers a handler
// for it; otherwise it leaves m as it found it (not released, its bytes
// unchanged) and returns false.
func (s *Server) serveMessageWith(m Message, inline bool) (served bool) {
	x := exchangePool.Get().(*exchange)
	x.srv, x.m, x.sent, x.done = s, m, false, false
	x.cfg = s.settings()
	x.inline, x.declined = inline, false
	x.out = x.out[:0]
	defer func() {
		if p := recover(); p != nil {
			s.opts.Logger.Error("handler panic", "panic", p, "remote", m.RemoteAddr())
			if !x.sent {
				x.out = appendErrorResponse(x.out[:0], 500)
				x.flushOut(true)
			}
		}
		served = !x.declined
		if served {
			poison(m.Data())
			poison(x.envHead)
			m.Release()
		}
		x.m, x.srv, x.cfg, x.req.srv, x.req.remote, x.inline = nil, nil, nil, nil, nil, false
		x.req.release()
		x.resp.release()
		if cap(x.envHead) > maxPooledBuf {
			x.envHead = nil
		}
		exchangePool.Put(x)
	}()
	data := m.Data()
	var status int
	if em, ok := m.(EnvelopeMessage); ok && em.Envelope() {
		status = x.serveEnvelope(data)
	} else {
		status = x.serve(data)
	}
	if x.declined {
		return false
	}
	if status != 0 {
		x.out = appendErrorResponse(x.out[:0], status)
		x.flushOut(true)
	} else if !x.done {
		x.flushOut(true) // an aborted response ends here
	}
	return true
}

// serve parses and handles one message; it returns a status to answer with
// when the message was rejected before the handler ran.
func (x *exchange) serve(data []byte) int {
	head := &x.req.head
	n, err := x.req.parseHead(x.cfg.parser, data, &x.cfg.paths)
	if err == phttp.ErrNeedMore {
		return 400 // the message ended inside the head
	}
	if err != nil {
		return phttp.StatusFor(err)
	}
	body := data[n:]
	max := x.cfg.Limits.MaxBodyBytes
	switch head.Body {
	case phttp.BodyLength:
		if max > 0 && head.ContentLength > max || head.ContentLength > int64(len(body)) {
			return 413
		}
		body = body[:head.ContentLength]
	case phttp.BodyChunked:
		if x.inline {
			// Decoding rewrites the body in place: a goroutine could
			// not serve the message after a decline. Chunked bodies
			// are rare in messages; they keep the goroutine.
			x.declined = true
			return 0
		}
		x.dec.Reset()
		x.dec.MaxBody = max
		dn, _, err := x.dec.Decode(body)
		if err == phttp.ErrNeedMore {
			return 400
		}
		if err != nil {
			return phttp.StatusFor(err)
		}
		body = body[:dn]
	default:
		body = nil
	}
	x.handle(data[:n], body)
	return 0
}

// handle runs the handler on the parsed head (in x.req.head, its bytes
// raw) and the whole body.
func (x *exchange) handle(raw, body []byte) {
	s := x.srv
	x.req.srv = s
	x.req.remote = x.m.RemoteAddr()
	x.req.remoteIP = x.req.remoteIP[:0]
	x.req.begin(raw, 0)
	x.req.identify()
	x.req.body.kind, x.req.body.msg, x.req.body.done = phttp.BodyLength, body, len(body) == 0
	p := x.req.planFor(s.router)
	h := Handler(p)
	if x.inline {
		// A declined message is parsed and looked up again on its
		// goroutine (its plan does not travel with a queued message), so
		// whether it needs one is decided before the admission, which a
		// rate limit would otherwise count twice.
		if p.needsGoroutine(&x.req) {
			x.declined = true
			x.req.end()
			return
		}
		if h = p.inline(&x.req); h == nil {
			x.declined = true
			x.req.end()
			return
		}
	}
	x.resp.begin(&x.req.head, false)
	x.resp.setRequestID(x.req.id.rid, s.opts.RequestID.Header)
	var start time.Time
	if s.opts.AccessLog != nil {
		start = time.Now()
	}
	h.ServeEdge(&x.resp, &x.req)
	x.resp.finish()
	x.logAccess(start, int64(len(raw)+len(body)))
	x.req.end()
}

// flushOut implements sink: it sends out as reply messages of at most
// MaxReply bytes. An intermediate flush keeps a partial message's worth for
// later; the final one marks its last message as such.
func (x *exchange) flushOut(final bool) error {
	max := x.m.MaxReply()
	out := x.out
	for len(out) > 0 {
		k := len(out)
		if max > 0 && k > max {
			k = max
		}
		if !final && max > 0 && k < max {
			break
		}
		last := final && k == len(out)
		if err := x.m.Reply(out[:k], !last); err != nil {
			x.out = x.out[:0]
			x.done = true
			return err
		}
		x.sent, x.done = true, last
		out = out[k:]
	}
	x.out = append(x.out[:0], out...)
	if final && !x.done {
		x.sent, x.done = true, true
		return x.m.Reply(nil, false)
	}
	return nil
}
