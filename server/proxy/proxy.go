package proxy

import (
	"errors"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"

	phttp "github.com/simdedge/simdedge/parse/http"
	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/internal/rbuf"
	"github.com/simdedge/simdedge/server/upstream"
)

// Options configures a Proxy.
type Options struct {
	// Via is the pseudonym the proxy adds to Via (RFC 9110 §7.6.3);
	// empty means "simdedge".
	Via string
	// Proto is the X-Forwarded-Proto value; empty means "http".
	Proto  string
	Logger *slog.Logger
	// Upgrades are the protocols an Upgrade request may switch to
	// (upgrade.go); nil means DefaultUpgrades (websocket), empty none.
	Upgrades []string
	// UntrustedForwarding: X-Real-IP and Forwarded (forwarded.go); the
	// zero value is ForwardingDrop.
	UntrustedForwarding Forwarding
}

// Proxy forwards requests to an Upstream. It is a server.Handler.
type Proxy struct {
	up    *Upstream
	via   string
	proto string
	log   *slog.Logger
	// upgrades are the allowed Upgrade protocols, lowercase.
	upgrades []string
	// loop is the Proxy as a server.LoopUpstream (loop.go).
	loop loopUpstream
	// fwd: Options.UntrustedForwarding.
	fwd Forwarding
}

// New returns a Proxy to up.
func New(up *Upstream, o Options) *Proxy {
	if o.Via == "" {
		o.Via = "simdedge"
	}
	if o.Proto == "" {
		o.Proto = "http"
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	p := &Proxy{up: up, via: o.Via, proto: o.Proto, log: o.Logger, upgrades: normalizeUpgrades(o.Upgrades),
		fwd: o.UntrustedForwarding}
	p.loop = loopUpstream{p}
	return p
}

// Sizes of the exchange.
const (
	// maxBufferedBody: a request body up to this size is read whole
	// before forwarding (one write with the head, and the request can be
	// retried on a stale pooled connection); a larger one streams.
	maxBufferedBody = 64 << 10
)

var (
	errUpgrade     = errors.New("proxy: upstream switched protocols")
	errBadResponse = errors.New("proxy: malformed upstream response")
	errClientBody  = errors.New("proxy: client request body failed")
)

// ServeEdge implements server.Handler.
func (p *Proxy) ServeEdge(w *server.ResponseWriter, r *server.Request) {
	head := r.Head()
	if h := server.SpecialTarget(r); h != nil {
		h.ServeEdge(w, r) // OPTIONS *, CONNECT: never forwarded
		return
	}
	if !forwardableTarget(head) {
		p.respondError(w, 400, "bad request target\n")
		return
	}
	upgrade := false
	if head.Upgrade != nil {
		switch p.upgradeOf(head) {
		case upgradeRefuse:
			p.refuseUpgrade(w)
			return
		case upgradeTunnel:
			upgrade = true
		}
	}
	if p.up.messages {
		p.serveMessage(w, r)
		return
	}
	if p.up.h2 != nil {
		p.serveH2(w, r) // h2up.go
		return
	}
	// body is a request body read whole before forwarding (it can be
	// resent on a stale pooled connection, and a malformed one is refused
	// before anything reaches the upstream). A chunked body is de-chunked
	// and forwarded with Content-Length when it ends within
	// maxBufferedBody. pre holds the first bytes of a streamed body.
	var body, pre []byte
	streamed, preEOF := false, false
	kind, length := head.Body, head.ContentLength
	switch head.Body {
	case phttp.BodyLength:
		if head.ContentLength <= maxBufferedBody {
			b, err := r.BodyBytes()
			if err != nil {
				p.respondError(w, server.StatusFor(err), "bad request body\n")
				w.SetClose()
				return
			}
			body = b
			break
		}
		streamed = true
		fallthrough
	case phttp.BodyChunked:
		bp := bufPool.Get().(*[]byte)
		defer bufPool.Put(bp)
		n, eof, err := readUpTo(r.Body(), *bp, head.Body == phttp.BodyChunked)
		if err != nil {
			p.respondError(w, server.StatusFor(err), "bad request body\n")
			w.SetClose()
			return
		}
		if head.Body == phttp.BodyChunked && eof {
			body, kind, length = (*bp)[:n], phttp.BodyLength, int64(n)
		} else {
			streamed, pre, preEOF = true, (*bp)[:n], eof
		}
	}
	isHead := string(head.Method) == "HEAD"
	pool := p.up.pool
	// One clock read per exchange: time.Now costs 50-150 ns on virtual
	// machines without a vDSO clock, and the deadlines below are lazy.
	now := time.Now()
	start := now
	// A request that may not go twice once written takes no pooled
	// connection the upstream has closed (a later failure is a 502).
	probe := !mayResend(head, true, true)
	// a drives the attempts (upstream.Attempt): the target of each, and
	// what follows a failure or a status the policy retries.
	var a upstream.Attempt
	a.Begin(pool, pool.Key(r), upstream.IdempotentMethod(head.Method), hasIdempotencyKey(head), nil, 0)
	defer a.Finish()
	var uc *upConn
	var copyErr chan error
	var t *target
	for {
		if a.Next(now.Sub(start)) != upstream.StepGo {
			p.answer(w, &a)
			return
		}
		ut := a.Target()
		t = targetOf(ut)
		r.SetUpstream(pool.Name(), ut.Address())
		left := a.Left()
		var step upstream.Step
		uc, copyErr, step = p.exchange(&a, t, r, head, exchangeArgs{
			now: now, start: start, probe: probe, isHead: isHead, body: body, pre: pre, preEOF: preEOF,
			streamed: streamed, kind: kind, length: length, upgrade: upgrade,
			connect: min(p.up.connect, left), header: min(p.up.header, left),
		})
		if step == upstream.StepRelay {
			break
		}
		if uc != nil {
			// A retried status: the response is dropped with its
			// connection.
			uc.nc.Close()
			if copyErr != nil {
				<-copyErr
			}
		}
		switch step {
		case upstream.StepAnswer:
			p.answer(w, &a)
			return
		case upstream.StepRetry:
			p.backoff(a.Backoff())
		}
		now = time.Now()
	}
	if shard := r.CountShard(); shard >= 0 {
		// The answered attempt's time to its response head (now is
		// when it started): one clock read, only with counting on.
		a.Target().ObserveLatency(shard, time.Since(now))
	}
	if uc.resp.Status == 101 {
		p.tunnel(w, &a, uc, t) // upgrade.go
		return
	}
	ok := p.forwardResponse(w, uc, isHead)
	if copyErr != nil {
		select {
		case err := <-copyErr:
			ok = ok && err == nil
		default:
			// The upstream answered before taking the whole body: stop
			// the copy, and the connection cannot be reused.
			uc.nc.Close()
			<-copyErr
			ok = false
			w.SetClose()
		}
	}
	a.End(upstream.StatusResult(uc.resp.Status))
	if ok && !uc.resp.Close && uc.r == uc.w && p.up.opts.SendProxyProtocol == 0 {
		t.put(uc, now)
	} else {
		uc.nc.Close()
	}
}

// exchangeArgs are the request's parts an attempt sends.
type exchangeArgs struct {
	// now is when the attempt started, start when the request did.
	now, start       time.Time
	probe, isHead    bool
	body, pre        []byte
	preEOF, streamed bool
	kind             phttp.BodyKind
	length           int64
	// upgrade: forward the Upgrade field and take a 101 (upgrade.go).
	upgrade bool
	// connect and header are the attempt's timeouts (the try deadline
	// may shorten them).
	connect, header time.Duration
}

// exchange is one attempt on t: it sends the request and reads the
// response head, and returns the driver's step (a.Head, a.Failed). A
// pooled connection the upstream had closed is replaced by a new one when
// the driver says so (StepResend). uc is the connection with the response
// head for StepRelay and StepRetry (a retried status), else nil (closed);
// copyErr is the streamed body's copy, if it started and still runs.
func (p *Proxy) exchange(a *upstream.Attempt, t *target, r *server.Request, head *phttp.Request, x exchangeArgs) (uc *upConn, copyErr chan error, step upstream.Step) {
	for stale := false; ; stale = true {
		send := p.up.opts.SendProxyProtocol
		var err error
		switch {
		case send != 0:
			uc, err = t.dial(x.connect) // never pooled (sendproxy.go)
		case stale:
			uc, err = t.connect(x.connect)
		default:
			uc, err = t.get(x.now, x.probe, x.connect)
		}
		if err != nil {
			return nil, nil, a.Failed(time.Since(x.start), upstream.Failure{Err: err, Kind: kindOf(err), Fresh: true})
		}
		uc.out = appendProxyHeader(uc.out[:0], send, r)
		uc.out = p.appendHead(uc.out, r, head, x.kind, x.length)
		if x.upgrade {
			uc.out = p.appendUpgrade(uc.out, head)
		}
		uc.out = append(uc.out, x.body...)
		uc.setWriteDeadline(x.now, x.header)
		var wn int
		wn, err = uc.nc.Write(uc.out)
		if err == nil && x.streamed {
			// The response-header timeout starts once the whole
			// request is sent (copyBody sets it): a healthy upstream
			// reading a slow upload must not time out. Until then the
			// wait is bounded by the copy: the client body's timeouts
			// and the upstream write deadlines end it, and closing
			// the connection wakes readHead.
			uc.readDL = time.Time{}
			uc.nc.SetReadDeadline(time.Time{})
			copyErr = p.startBody(uc, r.Body(), x.pre, x.preEOF, x.kind == phttp.BodyChunked)
			a.BodyStreamed() // pre no longer holds all of it
		}
		if err == nil {
			err = p.readHead(uc, x.isHead, x.now, copyErr == nil, x.header)
			if err == errUpgrade && x.upgrade {
				err = nil // a tunnel (upgrade.go)
			}
		}
		if err == nil {
			return uc, copyErr, a.Head(uc.resp.Status, func() time.Duration { return time.Since(x.start) })
		}
		uc.nc.Close()
		if copyErr != nil {
			if cerr := <-copyErr; cerr != nil && errors.Is(cerr, errClientBody) {
				// cerr joins errClientBody and the body's error, which
				// picks the status (413 for a body over the limit).
				err = cerr
			}
		}
		step = a.Failed(time.Since(x.start), upstream.Failure{Err: err, Kind: kindOf(err),
			Written: wn > 0 || copyErr != nil, Read: uc.w > 0, Fresh: uc.fresh})
		if step != upstream.StepResend {
			return nil, nil, step
		}
		copyErr = nil
	}
}

// respondError answers with status unless the response has started.
func (p *Proxy) respondError(w *server.ResponseWriter, status int, text string) {
	if w.Committed() {
		w.Abort()
		return
	}
	w.WriteHeader(status)
	w.AddHeader("Content-Type", "text/plain; charset=utf-8")
	w.WriteString(text)
}

// upstreamFailed answers 504 (timeout) or 502 for a request whose
// attempts failed; ut is the last target tried (nil: none).
func (p *Proxy) upstreamFailed(w *server.ResponseWriter, ut *upstream.Target, err error, timeout bool) {
	status, text := 502, "bad gateway\n"
	if timeout {
		status, text = 504, "gateway timeout\n"
	}
	addr := p.up.opts.Targets[0]
	if ut != nil {
		addr = ut.Address()
	}
	p.log.Warn("upstream failed", "upstream", p.up.opts.Name, "target", addr, "status", status, "err", err)
	p.respondError(w, status, text)
}

// bufPool holds the buffers request bodies are read into before (and
// while) they are forwarded.
var bufPool = sync.Pool{New: func() any { b := make([]byte, maxBufferedBody); return &b }}

// readUpTo reads from src into buf until buf is full or the body ends
// (all=true), or just once (all=false: the first bytes of a body that will
// stream anyway). Reading happens on the handler's goroutine: the first
// read sends "100 Continue" if the client waits for it, which touches the
// client connection's output and so must not race with the response.
func readUpTo(src io.Reader, buf []byte, all bool) (n int, eof bool, err error) {
	for n < len(buf) {
		k, err := src.Read(buf[n:])
		n += k
		if err == io.EOF {
			return n, true, nil
		}
		if err != nil {
			return n, false, err
		}
		if !all && n > 0 {
			break
		}
	}
	return n, false, nil
}

// startBody sends a streamed request body on its own goroutine, so that an
// upstream that answers while still reading (or echoes as it reads) cannot
// deadlock the exchange. pre is the part already read (readUpTo); its
// buffer is reused for the rest.
func (p *Proxy) startBody(uc *upConn, src io.Reader, pre []byte, eof, chunked bool) chan error {
	done := make(chan error, 1)
	go func() {
		done <- p.copyBody(uc, src, pre[:cap(pre)], len(pre), eof, chunked)
	}()
	return done
}

func (p *Proxy) copyBody(uc *upConn, src io.Reader, buf []byte, n int, eof, chunked bool) error {
	timeout := p.up.header
	var frame []byte
	for {
		if n > 0 {
			uc.writeDL = time.Time{}
			uc.nc.SetWriteDeadline(time.Now().Add(timeout))
			var err error
			if chunked {
				frame = strconv.AppendInt(frame[:0], int64(n), 16)
				frame = append(frame, "\r\n"...)
				if _, err = uc.nc.Write(frame); err == nil {
					if _, err = uc.nc.Write(buf[:n]); err == nil {
						_, err = uc.nc.Write(crlf)
					}
				}
			} else {
				_, err = uc.nc.Write(buf[:n])
			}
			if err != nil {
				// The upstream stopped taking the body (the write
				// deadline) or went away: end the handler's wait for
				// a head, which has no deadline of its own yet (a
				// response that came already was read by then).
				uc.nc.SetReadDeadline(time.Now())
				return err
			}
		}
		if eof {
			if chunked {
				uc.writeDL = time.Time{}
				uc.nc.SetWriteDeadline(time.Now().Add(timeout))
				if _, err := uc.nc.Write(lastChunk); err != nil {
					uc.nc.SetReadDeadline(time.Now()) // as above
					return err
				}
			}
			// The request is sent: the response-header timeout
			// starts (the handler's readHead left it unset; uc.readDL
			// stays zero, "unknown", for the next exchange).
			uc.nc.SetReadDeadline(time.Now().Add(timeout))
			return nil
		}
		var err error
		n, err = src.Read(buf)
		if err == io.EOF {
			eof = true
		} else if err != nil {
			// The client's body is malformed, too large or stalled: the
			// upstream must not see a complete request. Closing the
			// connection also wakes the handler's read of the response.
			uc.nc.Close()
			return errors.Join(errClientBody, err)
		}
	}
}

var (
	crlf      = []byte("\r\n")
	lastChunk = []byte("0\r\n\r\n")
)

// readHead reads the upstream's response head into uc.resp, skipping
// interim (1xx) responses. sent: the request is wholly sent, so the
// response-header timeout starts now (else copyBody starts it at the end
// of the body).
func (p *Proxy) readHead(uc *upConn, isHead bool, now time.Time, sent bool, timeout time.Duration) error {
	if sent {
		uc.setReadDeadline(now, timeout)
	}
	for {
		if uc.w > uc.r {
			n, err := p.parseHead(uc.buf[uc.r:uc.w], &uc.resp, isHead)
			uc.r += n
			if err != phttp.ErrNeedMore {
				return err
			}
		}
		uc.buf, uc.w = rbuf.Compact(uc.buf, uc.r, uc.w)
		uc.r = 0
		n, err := uc.nc.Read(uc.buf[uc.w:])
		uc.w += n
		if err != nil {
			if n > 0 && err == io.EOF {
				continue // parse what arrived; the next read reports EOF
			}
			return err
		}
	}
}

// parseHead parses the final response head at the start of b into resp,
// skipping interim (1xx) responses; both the goroutine exchange (readHead)
// and the event loop's (loopUpstream) use it. n is the bytes used, the
// interim responses included; err is phttp.ErrNeedMore while the head is
// incomplete, errUpgrade for 101 and errBadResponse for a malformed head.
func (p *Proxy) parseHead(b []byte, resp *phttp.Response, isHead bool) (n int, err error) {
	parser := p.up.parser
	for {
		if n == len(b) {
			return n, phttp.ErrNeedMore
		}
		var k int
		if isHead {
			k, err = parser.ParseHEADResponse(b[n:], resp)
		} else {
			k, err = parser.ParseResponse(b[n:], resp)
		}
		if err == phttp.ErrNeedMore {
			return n, err
		}
		if err != nil {
			return n, errors.Join(errBadResponse, err)
		}
		n += k
		switch s := resp.Status; {
		case s == 101:
			return n, errUpgrade
		case s < 200:
			continue // 100 Continue, 103 Early Hints
		}
		if (resp.Body == phttp.BodyChunked || resp.Body == phttp.BodyUntilClose) && otherCoding(resp.Headers) {
			return n, errResponseCoding // codings.go
		}
		return n, nil
	}
}
