//go:build linux

package server

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/simdedge/simdedge/server/metrics"
)

// TLS on the event loop (docs/decisions/0024-loop-tls.md): crypto/tls driven by the
// loop over the connection's buffers, so that TLS connections keep the
// loop's reads, writes and io_uring batches.
//
// crypto/tls has no resumable handshake, so the handshake runs on a
// goroutine over the socket (sniffing and handshake timeout as ServeTLS on
// goroutines), and the connection is then adopted by the loop. From there
// the tls.Conn sits on a tlsWire, an in-memory net.Conn: the loop reads
// ciphertext from the socket into the wire (read(2) or the ring) and drains
// plaintext out of the tls.Conn into the connection's read buffer until
// the wire says it would block, a net.Error whose Temporary() is true,
// which crypto/tls returns without making it the connection's sticky
// error. Responses stay plaintext in c.out; just before they are sent they
// are sealed by tls.Conn.Write into the wire's output, which the loop's
// write path (and the ring) sends. A connection handed to a goroutine
// later (Go handler, streamed body) keeps its tls.Conn: the wire then
// reads and writes a blocking net.Conn of the same socket.

const (
	// tlsInBuf is a TLS connection's ciphertext read buffer: one full
	// record (16 KiB of plaintext and its overhead) fits.
	tlsInBuf = 16<<10 + 512
	// tlsInMax bounds its growth: the loop drains it completely after
	// every read unless the request side is blocked, so reaching this
	// means a client that pushes data the server does not take.
	tlsInMax = 4 * tlsInBuf
	// tlsRecordHeader is the length of a TLS record header: type,
	// version, length (RFC 8446 §5.1).
	tlsRecordHeader = 5
	// loopTLSEnv names the environment variable that, set to "off",
	// serves TLS listeners of the loop engine on goroutines (design B,
	// kept for measurement).
	loopTLSEnv = "SIMDEDGE_LOOP_TLS"
)

// errWouldBlock is the wire's answer when it holds no more ciphertext.
var errWouldBlock net.Error = wouldBlockError{}

type wouldBlockError struct{}

func (wouldBlockError) Error() string   { return "server: tls input would block" }
func (wouldBlockError) Timeout() bool   { return true }
func (wouldBlockError) Temporary() bool { return true }

var errTLSInputFull = errors.New("server: tls input not drained")

// tlsInPool holds ciphertext read buffers of TLS connections.
var tlsInPool = sync.Pool{New: func() any { b := make([]byte, tlsInBuf); return &b }}

// loopTLSOn reports whether ServeTLS drives TLS from the loop (design A).
func loopTLSOn() bool { return os.Getenv(loopTLSEnv) != "off" }

// tlsWire is the net.Conn under a loop connection's tls.Conn.
type tlsWire struct {
	// in[ir:iw] is ciphertext read from the socket, not yet taken by
	// crypto/tls.
	in     []byte
	ir, iw int
	// skip is how much of the current record is still to be handed to
	// crypto/tls (0: the next byte starts a record header).
	skip int
	// out[opos:] is sealed ciphertext still to be sent.
	out  []byte
	opos int
	// raw is the blocking connection of the handshake and of a
	// connection handed to a goroutine; nil while the loop serves it.
	raw           net.Conn
	remote, local net.Addr
}

// Read hands crypto/tls ciphertext one record at a time: never bytes past
// the end of the record it is reading. So once a Read of the tls.Conn
// returned less plaintext than asked for, crypto/tls holds nothing more,
// and the loop knows from the wire alone whether another Read would find
// anything (tlsFill): a Read that only says "would block" costs a lock and
// an allocation inside crypto/tls. The framing is followed from the first
// byte, the handshake's included (blocking mode reads through the buffer).
func (w *tlsWire) Read(p []byte) (int, error) {
	if w.in == nil && w.raw != nil {
		// Given back after the hand-off (releaseInput): crypto/tls
		// reads the socket itself, into its own buffer, for the rest
		// of the connection's life.
		return w.raw.Read(p)
	}
	for {
		if w.skip == 0 && w.iw-w.ir >= tlsRecordHeader {
			h := w.in[w.ir:]
			w.skip = tlsRecordHeader + (int(h[3])<<8 | int(h[4]))
		}
		if w.skip > 0 && w.ir < w.iw {
			n := copy(p[:min(len(p), w.skip)], w.in[w.ir:w.iw])
			w.ir += n
			w.skip -= n
			if w.ir == w.iw {
				w.ir, w.iw = 0, 0
			}
			return n, nil
		}
		if w.raw == nil {
			return 0, errWouldBlock
		}
		room := w.room()
		if len(room) == 0 {
			return 0, errTLSInputFull
		}
		n, err := w.raw.Read(room)
		w.iw += n
		if n == 0 && err != nil {
			return 0, err
		}
	}
}

// buffered reports whether the wire holds ciphertext crypto/tls has not
// taken.
func (w *tlsWire) buffered() bool { return w.ir < w.iw }

func (w *tlsWire) Write(p []byte) (int, error) {
	if w.raw == nil {
		w.out = append(w.out, p...)
		return len(p), nil
	}
	if w.opos < len(w.out) {
		// Ciphertext the loop had sealed but not sent goes first.
		if _, err := w.raw.Write(w.out[w.opos:]); err != nil {
			return 0, err
		}
		w.out, w.opos = w.out[:0], 0
	}
	return w.raw.Write(p)
}

// room returns the free end of the input buffer, compacted first.
func (w *tlsWire) room() []byte {
	if w.ir > 0 {
		w.iw = copy(w.in, w.in[w.ir:w.iw])
		w.ir = 0
	}
	if w.iw == len(w.in) && len(w.in) < tlsInMax {
		w.in = append(w.in, make([]byte, len(w.in))...)
	}
	return w.in[w.iw:]
}

func (w *tlsWire) Close() error {
	if w.raw != nil {
		return w.raw.Close()
	}
	return nil
}

// CloseWrite sends the FIN of a handed-off connection (a lingering
// close, after crypto/tls's close_notify: halfClose).
func (w *tlsWire) CloseWrite() error { return rawCloseWrite(w.raw) }

func (w *tlsWire) SetDeadline(t time.Time) error {
	if w.raw != nil {
		return w.raw.SetDeadline(t)
	}
	return nil
}

func (w *tlsWire) SetReadDeadline(t time.Time) error {
	if w.raw != nil {
		return w.raw.SetReadDeadline(t)
	}
	return nil
}

func (w *tlsWire) SetWriteDeadline(t time.Time) error {
	if w.raw != nil {
		return w.raw.SetWriteDeadline(t)
	}
	return nil
}

func (w *tlsWire) LocalAddr() net.Addr  { return w.local }
func (w *tlsWire) RemoteAddr() net.Addr { return w.remote }

// loopTLS is a TLS connection of the loop engine, and its Stream.
type loopTLS struct {
	tc *tls.Conn
	w  tlsWire
	// sealed is how much of c.out is sealed into w.out.
	sealed int
	// more: the last drain stopped for lack of room, so crypto/tls may
	// hold plaintext; eof: the client sent close_notify (or ended).
	more, eof bool
	lp        *loop
	h         heldConn
	fd        int // the loop's descriptor, once adopted
}

// Stream, for the goroutine engine after a hand-off (and the contract on
// the loop, where Read never blocks and Write only seals).
func (t *loopTLS) Read(p []byte) (int, error)         { return t.tc.Read(p) }
func (t *loopTLS) Write(p []byte) (int, error)        { return t.tc.Write(p) }
func (t *loopTLS) SetReadDeadline(d time.Time) error  { return t.w.SetReadDeadline(d) }
func (t *loopTLS) SetWriteDeadline(d time.Time) error { return t.w.SetWriteDeadline(d) }
func (t *loopTLS) RemoteAddr() net.Addr               { return t.w.remote }
func (t *loopTLS) LocalAddr() net.Addr                { return t.w.local }
func (t *loopTLS) tlsConn() *tls.Conn                 { return t.tc }

// Close ends a handed-off connection with close_notify (crypto/tls bounds
// that write); on the loop, closeConn closes the descriptor.
func (t *loopTLS) Close() error {
	if t.w.raw == nil {
		return nil
	}
	return t.tc.Close()
}

// seal encrypts what of out is not yet sealed and returns the ciphertext
// still to send (empty if sealing failed: the connection is broken).
func (t *loopTLS) seal(out []byte) []byte {
	if t.sealed < len(out) {
		if _, err := t.tc.Write(out[t.sealed:]); err != nil {
			return nil
		}
		t.sealed = len(out)
	}
	return t.w.out[t.w.opos:]
}

// releaseInput gives the ciphertext input buffer back once the
// connection is handed off to a goroutine (raw is set) and none of it is
// unread: serveH2 calls it at the start of HTTP/2, h2conn.rest when idle.
// It is not taken again: once the loop no longer reads the connection,
// the record-at-a-time framing that the buffer is for (tlsFill) has no
// use, and the wire reads the socket straight into crypto/tls's buffer.
func (t *loopTLS) releaseInput() {
	w := &t.w
	if w.raw == nil || w.in == nil || w.ir != w.iw {
		return
	}
	if len(w.in) == tlsInBuf {
		poolTLSIn(w.in)
	}
	w.in, w.ir, w.iw, w.skip = nil, 0, 0, 0
}

// release gives the buffers back once the connection is closed.
func (t *loopTLS) release() {
	if len(t.w.in) == tlsInBuf {
		b := t.w.in
		tlsInPool.Put(&b)
	}
	t.w.in, t.w.out = nil, nil
}

// recvBuf is where the next socket read of lc goes: the read buffer, or
// for TLS the ciphertext buffer.
func (lc *lconn) recvBuf() []byte {
	if lc.tls == nil {
		return lc.c.rbuf[lc.c.w:]
	}
	return lc.tls.w.room()
}

// outBytes is what lc has to send: c.out from wpos, or for TLS the
// ciphertext of c.out (sealed now if it is not yet). Empty when sealing
// failed.
func (lc *lconn) outBytes() []byte {
	if lc.tls == nil {
		return lc.c.out[lc.wpos:]
	}
	return lc.tls.seal(lc.c.out)
}

// wrote accounts n bytes of outBytes sent. For TLS, c.out counts as
// written once all its ciphertext is.
func (lc *lconn) wrote(n int) {
	if lc.tls == nil {
		lc.wpos += n
		return
	}
	w := &lc.tls.w
	w.opos += n
	if w.opos >= len(w.out) {
		w.out, w.opos = w.out[:0], 0
		lc.wpos = len(lc.c.out)
	}
}

// tlsFill drains plaintext from the tls.Conn into rbuf until the wire
// would block or rbuf is full. It reports false if it closed the
// connection (a TLS error: bad record, alert).
func (lp *loop) tlsFill(lc *lconn) bool {
	t, c := lc.tls, lc.c
	for t.more {
		if c.w == len(c.rbuf) {
			if c.r == 0 {
				return true // full: more stays set
			}
			lp.compact(c)
		}
		room := len(c.rbuf) - c.w
		n, err := t.tc.Read(c.rbuf[c.w:])
		c.w += n
		switch {
		case err == nil:
			if n < room && !t.w.buffered() {
				// Less than asked: crypto/tls holds no more (see
				// tlsWire.Read), and neither does the wire.
				t.more = false
			}
		case err == errWouldBlock:
			t.more = false
		case err == io.EOF:
			t.more, t.eof = false, true
		default:
			lp.closeConn(lc)
			return false
		}
	}
	return true
}

// tlsMore reports whether process should drain more plaintext and serve
// again: crypto/tls may hold more, and serveBuffered stopped for lack of
// input with room now in rbuf.
func (lp *loop) tlsMore(lc *lconn) bool {
	t, c := lc.tls, lc.c
	if lc.closeAfter || lc.ex.active || len(c.out) >= flushThreshold {
		return false
	}
	if t.more && (c.w < len(c.rbuf) || c.r > 0) {
		return true
	}
	if t.eof {
		// The client is done sending: answer what came, then close.
		lc.closeAfter = true
	}
	return false
}

// tlsBye sends close_notify, best effort and without blocking, before the
// loop closes or shuts down the writing side of a TLS connection. What the
// wire holds goes first (the rest of a record, or crypto/tls's alert after
// a bad record), so the stream stays whole as far as it goes.
func (lp *loop) tlsBye(lc *lconn) {
	t := lc.tls
	if t == nil || t.tc == nil {
		return
	}
	t.tc.CloseWrite() // fails after an alert was sent: that alert goes
	if t.w.opos < len(t.w.out) {
		rawWrite(lc.fd, t.w.out[t.w.opos:])
	}
	t.w.out, t.w.opos = t.w.out[:0], 0
}

// addTLS starts the handshake of an accepted connection on a goroutine;
// the loop adopts the connection once it is done (adoptTLS). The
// connection has its slot (count) from now on.
func (lp *loop) addTLS(h heldConn) {
	t := &loopTLS{lp: lp, h: h, fd: -1}
	t.w.local, t.w.remote = lp.laddr, sockaddrTCP(h.sa)
	lp.count.Add(1)
	lp.shaking.Add(1)
	go t.handshake()
}

// handshake runs on the connection's goroutine: sniff, TLS handshake, then
// the hand-over to the loop.
func (t *loopTLS) handshake() {
	lp := t.lp
	o := lp.tlsOpts
	f := os.NewFile(uintptr(t.h.fd), "")
	nc, err := net.FileConn(f) // a duplicate in Go's netpoller
	f.Close()
	if err != nil || !lp.pendAdd(t, nc) {
		if nc != nil {
			nc.Close()
		}
		lp.tlsFailed(t)
		return
	}
	outcome := t.shake(nc, o)
	lp.mlst.TLSHandshake(metrics.ShardOf(lp.srv.opts.Metrics), outcome)
	ok := outcome == metrics.TLSOK
	lp.pendDel(t)
	if ok {
		if rc, err := nc.(syscall.Conn).SyscallConn(); err == nil {
			rc.Control(func(fd uintptr) {
				t.fd, err = unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0)
				if err != nil {
					t.fd = -1
				}
			})
		}
	}
	nc.Close()
	t.w.raw = nil
	if t.fd < 0 {
		lp.tlsFailed(t)
		return
	}
	if !lp.adoptTLS(t) {
		unix.Close(t.fd)
		lp.tlsFailed(t)
	}
}

// shake sniffs the first bytes and runs the handshake over nc, under the
// handshake timeout; it returns the outcome (metrics.TLSOK...). A PROXY
// header that does not come, or comes wrong, counts as a failed handshake.
func (t *loopTLS) shake(nc net.Conn, o *TLSOptions) int {
	dl := time.Now().Add(o.HandshakeTimeout)
	nc.SetDeadline(dl)
	if t.lp.pol != nil && t.lp.pol.ProxyProtocol {
		if nc = t.shakeProxy(nc, dl); nc == nil { // loopproxyproto_linux.go
			return metrics.TLSFailed
		}
	}
	bp := tlsInPool.Get().(*[]byte)
	t.w.in = *bp
	tc, outcome, _ := shakeTLS(nc, t.w.in, o.Config, func(n int) net.Conn {
		// The wire replays the first bytes from its input buffer.
		t.w.ir, t.w.iw, t.w.skip = 0, n, 0
		t.w.raw = nc
		return &t.w
	})
	if outcome == metrics.TLSOK {
		t.tc = tc
		nc.SetDeadline(time.Time{})
	}
	return outcome
}

// tlsFailed gives back what a connection that never reached the loop held.
func (lp *loop) tlsFailed(t *loopTLS) {
	t.release()
	if t.h.counted {
		lp.srv.ips.release(t.h.ip)
	}
	lp.count.Add(-1)
	lp.shaking.Add(-1)
	lp.wake() // the loop may be waiting for its last handshake, or paused
}

// pendAdd records a handshake in progress, so that Close can end it; false
// if the loop is ending.
func (lp *loop) pendAdd(t *loopTLS, nc net.Conn) bool {
	lp.wakeMu.Lock()
	defer lp.wakeMu.Unlock()
	if lp.exited || lp.abort.Load() {
		return false
	}
	if lp.pending == nil {
		lp.pending = make(map[*loopTLS]net.Conn)
	}
	lp.pending[t] = nc
	return true
}

func (lp *loop) pendDel(t *loopTLS) {
	lp.wakeMu.Lock()
	delete(lp.pending, t)
	lp.wakeMu.Unlock()
}

// killHandshakes ends the handshakes in progress (Close).
func (lp *loop) killHandshakes() {
	lp.wakeMu.Lock()
	for _, nc := range lp.pending {
		nc.Close()
	}
	lp.wakeMu.Unlock()
}

// adoptTLS queues a handshaken connection for the loop; false if the loop
// has ended.
func (lp *loop) adoptTLS(t *loopTLS) bool {
	lp.wakeMu.Lock()
	defer lp.wakeMu.Unlock()
	if lp.exited || lp.abort.Load() {
		return false
	}
	lp.adoptq = append(lp.adoptq, t)
	unix.Write(lp.wfd, wakeValue[:])
	return true
}

// adopt registers the connections whose handshake finished, and serves
// what they already sent.
func (lp *loop) adopt(now int64) {
	lp.wakeMu.Lock()
	q := lp.adoptq
	lp.adoptq = lp.adoptq2[:0]
	lp.wakeMu.Unlock()
	for i, t := range q {
		q[i] = nil
		lp.shaking.Add(-1)
		h := t.h
		h.fd = t.fd
		lc := lp.register(h, t, now)
		if lc == nil {
			continue
		}
		// The handshake's reads may have taken requests already.
		t.more = true
		lp.process(lc, now)
	}
	lp.adoptq2 = q[:0]
}

// dropAdopted closes the connections queued for adoption when the loop
// ends.
func (lp *loop) dropAdopted() {
	lp.wakeMu.Lock()
	q := lp.adoptq
	lp.adoptq = nil
	lp.wakeMu.Unlock()
	for _, t := range q {
		unix.Close(t.fd)
		t.release()
		if t.h.counted {
			lp.srv.ips.release(t.h.ip)
		}
		lp.count.Add(-1)
		lp.shaking.Add(-1)
	}
}

// serveLoopTLS serves TLS listener l on an event loop (design A).
func (s *Server) serveLoopTLS(l net.Listener, o TLSOptions) error {
	return s.serveLoop(l, &o)
}
