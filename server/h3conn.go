package server

import (
	"crypto/tls"
	"net"
	"sync"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/quicvarint"

	"github.com/simdedge/simdedge/server/metrics"
)

// h3conn is one HTTP/3 connection: its control streams (§6.2.1) and its
// request streams, each served on a goroutine of its own (h3stream.go).
type h3conn struct {
	srv *Server
	// c anchors the requests in the server as an HTTP/1.1 or HTTP/2
	// connection does (Request.c): the settings the connection was
	// accepted under, its metrics shard, access-log shard and path
	// normalisation, and its addresses and TLS state through st. It
	// reads and writes no bytes.
	c  *conn
	qc *quic.Conn
	o  *HTTP3Options

	mu sync.Mutex
	// running counts request streams whose handlers run; lastID is the
	// last stream accepted (GOAWAY names the one after it).
	running  int
	lastID   quic.StreamID
	accepted bool
	draining bool
	// goawaySent: GOAWAY went out on ctrl (once).
	goawaySent bool
	ctrl       *quic.SendStream
	handlers   sync.WaitGroup
	// peerControl: the client's control stream has been seen (one only).
	peerControl bool
}

// h3connStream is the Stream of an HTTP/3 connection's conn: addresses,
// TLS state and Close; it carries no bytes (requests have their streams).
type h3connStream struct{ qc *quic.Conn }

func (s h3connStream) Read([]byte) (int, error)         { return 0, net.ErrClosed }
func (s h3connStream) Write([]byte) (int, error)        { return 0, net.ErrClosed }
func (s h3connStream) Close() error                     { return s.qc.CloseWithError(h3NoError, "") }
func (s h3connStream) SetReadDeadline(time.Time) error  { return nil }
func (s h3connStream) SetWriteDeadline(time.Time) error { return nil }
func (s h3connStream) RemoteAddr() net.Addr             { return s.qc.RemoteAddr() }
func (s h3connStream) LocalAddr() net.Addr              { return s.qc.LocalAddr() }

// tlsConn makes the stream a tlsConnStream, so that Request.TLS is true
// (QUIC is always TLS); there is no tls.Conn: TLSConnectionState asks
// quic-go.
func (s h3connStream) tlsConn() *tls.Conn { return nil }

func newH3conn(s *Server, qc *quic.Conn, o *HTTP3Options, key any) *h3conn {
	hc := &h3conn{srv: s, qc: qc, o: o}
	c := newAnchorConn(s, h3connStream{qc})
	c.lkey = key
	c.paths = s.pathsFor(key, c.cfg)
	hc.c = c
	return hc
}

// serve runs the connection until it closes: it sends SETTINGS, watches
// the client's unidirectional streams and accepts request streams.
func (hc *h3conn) serve() {
	qc := hc.qc
	ctrl, err := qc.OpenUniStream()
	if err != nil {
		return
	}
	ctrl.Write(hc.settingsFrame())
	hc.mu.Lock()
	hc.ctrl = ctrl
	if hc.draining {
		hc.sendGoaway() // drain came before the control stream
	}
	hc.mu.Unlock()
	go hc.acceptUni()
	if hc.srv.closing.Load() {
		// Accepted as Shutdown began. (One accepted during StartDrain
		// serves a stream first, as HTTP/2's does: streamEnded.)
		hc.drain()
	}
	ctx := qc.Context()
	for {
		st, err := qc.AcceptStream(ctx)
		if err != nil {
			break
		}
		hc.mu.Lock()
		switch {
		case hc.draining:
			// §5.2: after GOAWAY no new request is processed; the
			// client may retry it on a new connection.
			hc.mu.Unlock()
			st.CancelRead(h3RequestRejected)
			st.CancelWrite(h3RequestRejected)
			continue
		case hc.running >= hc.o.MaxStreams:
			// A stream the client reset keeps its slot while its
			// handler runs: resets do not buy new handlers.
			hc.mu.Unlock()
			hc.c.lst.HTTP3(hc.c.shard, metrics.H3Error)
			st.CancelRead(h3RequestRejected)
			st.CancelWrite(h3RequestRejected)
			continue
		}
		hc.running++
		hc.lastID, hc.accepted = st.StreamID(), true
		hc.handlers.Add(1)
		hc.mu.Unlock()
		hc.srv.workers.start(streamTask{h3: hc, qs: st})
	}
	hc.handlers.Wait()
}

// settingsFrame is the control stream's type and first frame (§7.2.4):
// no dynamic QPACK table (RFC 9204 §3.2.3: the client's encoder then
// sends only static and literal fields), and the field section bound.
func (hc *h3conn) settingsFrame() []byte {
	var p []byte
	p = quicvarint.Append(p, h3SettingQPACKTable)
	p = quicvarint.Append(p, 0)
	p = quicvarint.Append(p, h3SettingQPACKBlocked)
	p = quicvarint.Append(p, 0)
	p = quicvarint.Append(p, h3SettingMaxFieldSize)
	p = quicvarint.Append(p, uint64(hc.o.MaxHeaderBytes))
	b := quicvarint.Append(nil, h3StreamControl)
	b = appendH3FrameHead(b, h3FrameSettings, uint64(len(p)))
	return append(b, p...)
}

// acceptUni takes the client's unidirectional streams (§6.2).
func (hc *h3conn) acceptUni() {
	ctx := hc.qc.Context()
	for {
		st, err := hc.qc.AcceptUniStream(ctx)
		if err != nil {
			return
		}
		go hc.serveUni(st)
	}
}

// serveUni reads one unidirectional stream's type and serves it.
func (hc *h3conn) serveUni(st *quic.ReceiveStream) {
	typ, err := quicvarint.Read(quicvarint.NewReader(st))
	if err != nil {
		st.CancelRead(h3StreamCreationError)
		return
	}
	switch typ {
	case h3StreamControl:
		hc.mu.Lock()
		dup := hc.peerControl
		hc.peerControl = true
		hc.mu.Unlock()
		if dup {
			hc.qc.CloseWithError(h3StreamCreationError, "") // §6.2.1
			return
		}
		hc.readControl(st)
	case h3StreamPush:
		hc.qc.CloseWithError(h3StreamCreationError, "") // §6.2.2: server push only
	case h3StreamEncoder, h3StreamDecoder:
		// With no dynamic table there is nothing to act on (RFC 9204
		// §4.2); the streams must stay open, and are read to their end
		// so that the client's flow control does not stall.
		drainReader(st)
	default:
		st.CancelRead(h3StreamCreationError) // §6.2.3: unknown types
	}
}

// drainReader reads r to its end.
func drainReader(r interface{ Read([]byte) (int, error) }) {
	var b [512]byte
	for {
		if _, err := r.Read(b[:]); err != nil {
			return
		}
	}
}

// readControl reads the client's control stream: SETTINGS first
// (§6.2.1), then GOAWAY and MAX_PUSH_ID (both ignored: a server that does
// not push has nothing to do with them) and unknown frames. Its end is a
// connection error (§6.2.1).
func (hc *h3conn) readControl(st *quic.ReceiveStream) {
	var fr h3Reader
	fr.reset(st)
	first := true
	for {
		typ, length, err := fr.next()
		if err != nil {
			hc.qc.CloseWithError(h3ClosedCriticalStream, "")
			return
		}
		if first != (typ == h3FrameSettings) {
			code := quic.ApplicationErrorCode(h3FrameUnexpected)
			if first {
				code = h3MissingSettings
			}
			hc.qc.CloseWithError(code, "")
			return
		}
		first = false
		switch {
		case typ == h3FrameSettings:
			if length > h3MaxSettingsFrameSize {
				hc.qc.CloseWithError(h3ExcessiveLoad, "")
				return
			}
			p, err := fr.payload(int(length))
			if err != nil || !h3ValidSettings(p) {
				hc.qc.CloseWithError(h3SettingsError, "")
				return
			}
		case typ == h3FrameData || typ == h3FrameHeaders || typ == h3FramePushPromise || h3FrameH2Only(typ):
			hc.qc.CloseWithError(h3FrameUnexpected, "") // §7.2
			return
		default:
			if err := fr.skip(length); err != nil {
				hc.qc.CloseWithError(h3ClosedCriticalStream, "")
				return
			}
		}
	}
}

// h3ValidSettings checks a SETTINGS payload (§7.2.4): identifier and
// value pairs, no identifier twice, none of HTTP/2's.
func h3ValidSettings(p []byte) bool {
	var seen [8]bool
	for len(p) > 0 {
		id, n, err := quicvarint.Parse(p)
		if err != nil {
			return false
		}
		p = p[n:]
		_, n, err = quicvarint.Parse(p)
		if err != nil {
			return false
		}
		p = p[n:]
		switch id {
		case h3SettingH2Reserved2, h3SettingH2Reserved3, h3SettingH2Reserved4, h3SettingH2Reserved5:
			return false
		}
		if id < uint64(len(seen)) {
			if seen[id] {
				return false
			}
			seen[id] = true
		}
	}
	return true
}

// drain sends GOAWAY (§5.2) naming the first stream not served, and closes
// the connection once the streams it serves have ended.
func (hc *h3conn) drain() {
	hc.mu.Lock()
	defer hc.mu.Unlock()
	if hc.draining {
		return
	}
	hc.draining = true
	hc.sendGoaway()
	hc.closeIfIdle()
}

// sendGoaway writes GOAWAY once the control stream is open; under mu.
func (hc *h3conn) sendGoaway() {
	if hc.goawaySent || hc.ctrl == nil {
		return
	}
	hc.goawaySent = true
	var next quic.StreamID
	if hc.accepted {
		next = hc.lastID + 4 // client-initiated bidirectional streams step by 4
	}
	b := appendH3FrameHead(nil, h3FrameGoaway, uint64(quicvarint.Len(uint64(next))))
	b = quicvarint.Append(b, uint64(next))
	hc.ctrl.Write(b)
}

// h3CloseGrace is how long a drained connection stays open after its last
// stream: the GOAWAY and the last responses reach the client before
// CONNECTION_CLOSE does, and requests it sent meanwhile are refused with a
// code that says they may be retried.
const h3CloseGrace = 200 * time.Millisecond

// closeIfIdle closes a draining connection without running streams;
// under mu.
func (hc *h3conn) closeIfIdle() {
	if !hc.draining || hc.running > 0 {
		return
	}
	time.AfterFunc(h3CloseGrace, func() {
		hc.mu.Lock()
		idle := hc.running == 0
		hc.mu.Unlock()
		if idle {
			hc.qc.CloseWithError(h3NoError, "")
		}
	})
}

// closeWithError ends the connection with a connection error (none to
// end in the fuzz test).
func (hc *h3conn) closeWithError(code quic.ApplicationErrorCode) {
	if hc.qc != nil {
		hc.qc.CloseWithError(code, "")
	}
}

// streamEnded records that a request stream's handler has returned.
func (hc *h3conn) streamEnded() {
	hc.mu.Lock()
	hc.running--
	hc.closeIfIdle()
	hc.mu.Unlock()
	hc.handlers.Done()
	if hc.srv.draining.Load() {
		hc.drain() // opened during StartDrain: one stream, then GOAWAY
	}
}
