package server

import (
	"time"

	"golang.org/x/net/http2"

	"github.com/simdedge/simdedge/server/metrics"
)

// process handles one frame on the reader goroutine. A connection error
// comes back as h2ConnError; stream errors are answered here with
// RST_STREAM. Each case cites RFC 9113.
func (hc *h2conn) process(f *h2frame) error {
	if hc.firstFrame {
		// §3.4: the preface is followed by a SETTINGS frame.
		if f.typ != http2.FrameSettings || f.has(http2.FlagSettingsAck) {
			return h2ConnError(http2.ErrCodeProtocol)
		}
		hc.firstFrame = false
	}
	if f.idle() {
		if err := hc.idleFrame(false); err != nil {
			return err
		}
	}
	switch f.typ {
	case http2.FrameSettings:
		return hc.onSettings(f)
	case http2.FramePing:
		if f.has(http2.FlagPingAck) {
			return nil // §6.7: the server sends no pings of its own
		}
		hc.mu.Lock()
		hc.fr.WritePing(true, [8]byte(f.p))
		hc.mu.Unlock()
	case http2.FrameGoAway:
		// §6.8: the client opens no more streams; those open finish.
		hc.mu.Lock()
		hc.draining = true
		hc.mu.Unlock()
	case http2.FrameWindowUpdate:
		return hc.onWindowUpdate(f)
	case http2.FrameRSTStream:
		return hc.onReset(f)
	case http2.FramePriority:
		// §5.3.1: a stream cannot depend on itself. Priorities are
		// otherwise ignored (RFC 9113 deprecates the scheme).
		if f.dep == f.sid {
			hc.mu.Lock()
			hc.resetStream(f.sid, http2.ErrCodeProtocol)
			hc.mu.Unlock()
		}
	case http2.FramePushPromise:
		// §8.4: a client cannot push.
		return h2ConnError(http2.ErrCodeProtocol)
	case http2.FrameHeaders:
		end := f.has(http2.FlagHeadersEndHeaders)
		hc.blockStarts(end)
		return hc.onHeaders(f, end)
	case http2.FrameContinuation:
		end := f.has(http2.FlagContinuationEndHeaders)
		if err := hc.blockContinues(end); err != nil {
			return err
		}
		return hc.onContinuation(f, end)
	case http2.FrameData:
		return hc.onData(f)
	}
	// §5.5: frames of unknown types are ignored (the reader has
	// already checked they do not interrupt a header block).
	return nil
}

// idle reports whether f is a frame that makes no progress by its kind
// and size (h2budget.go). RST_STREAM has its own bound (MaxResets), and
// PUSH_PROMISE ends the connection anyway.
func (f *h2frame) idle() bool {
	switch f.typ {
	case http2.FrameData:
		// Padding alone is no payload: it is given back at once.
		return len(f.p) == 0 && !f.has(http2.FlagDataEndStream)
	case http2.FrameHeaders:
		return len(f.p) == 0 && !f.has(http2.FlagHeadersEndHeaders)
	case http2.FrameContinuation:
		return len(f.p) == 0 && !f.has(http2.FlagContinuationEndHeaders)
	case http2.FrameRSTStream, http2.FramePushPromise:
		return false
	}
	// SETTINGS, PING, WINDOW_UPDATE, PRIORITY, GOAWAY and unknown types
	// (§5.5) serve no request by themselves.
	return true
}

// blockStarts notes a HEADERS frame: a header block without END_HEADERS
// must end within ReadHeader (as an HTTP/1.1 head must, from its first
// byte; the first request of a connection from its start), and may have
// MaxContinuations CONTINUATION frames.
func (hc *h2conn) blockStarts(ended bool) {
	hc.hconts = 0
	if ended {
		return
	}
	dl := h2Deadline(hc.c.cfg.Timeouts.ReadHeader)
	if hc.lastID == 0 && !hc.startDL.IsZero() && hc.startDL.Before(dl) {
		dl = hc.startDL
	}
	hc.blockDL, hc.blockArmed = dl, false
}

// blockContinues counts a CONTINUATION frame against MaxContinuations
// (CVE-2024-28182: a block of tiny fragments costs a frame per byte).
func (hc *h2conn) blockContinues(ended bool) error {
	hc.hconts++
	if hc.hconts > hc.lim.MaxContinuations {
		return h2ConnError(http2.ErrCodeEnhanceYourCalm)
	}
	if ended {
		hc.blockEnded()
	}
	return nil
}

// blockEnded: END_HEADERS arrived; the next read gets its usual deadline.
func (hc *h2conn) blockEnded() {
	if !hc.blockDL.IsZero() {
		hc.blockDL = time.Time{}
		hc.rearm = true
	}
}

// onSettings applies the client's settings and acknowledges them (§6.5).
func (hc *h2conn) onSettings(f *h2frame) error {
	if f.has(http2.FlagSettingsAck) {
		return nil
	}
	hc.mu.Lock()
	defer hc.mu.Unlock()
	for i := range len(f.p) / 6 {
		if err := hc.applySetting(f.setting(i)); err != nil {
			if ce, ok := err.(http2.ConnectionError); ok {
				return h2ConnError(ce)
			}
			return h2ConnError(http2.ErrCodeProtocol)
		}
	}
	hc.fr.WriteSettingsAck()
	hc.pump()
	return nil
}

// applySetting applies one of the client's settings; under mu.
func (hc *h2conn) applySetting(s http2.Setting) error {
	if err := s.Valid(); err != nil {
		return err
	}
	switch s.ID {
	case http2.SettingInitialWindowSize:
		// §6.9.2: the change applies to every stream's window,
		// which may become negative.
		delta := int64(s.Val) - hc.peerWindow
		for _, st := range hc.streams {
			if st.sendWin+delta > h2MaxWindow {
				return http2.ConnectionError(http2.ErrCodeFlowControl)
			}
		}
		for _, st := range hc.streams {
			st.sendWin += delta
		}
		hc.peerWindow = int64(s.Val)
	case http2.SettingMaxFrameSize:
		hc.peerFrame = int(s.Val)
	case http2.SettingHeaderTableSize:
		hc.enc.setPeerMax(s.Val)
	}
	return nil
}

// onWindowUpdate adds to a send window (§6.9.1).
func (hc *h2conn) onWindowUpdate(f *h2frame) error {
	hc.mu.Lock()
	defer hc.mu.Unlock()
	inc := int64(f.val)
	if f.sid == 0 {
		if hc.sendConn+inc > h2MaxWindow {
			return h2ConnError(http2.ErrCodeFlowControl)
		}
		hc.sendConn += inc
		hc.pump()
		return nil
	}
	if f.sid > hc.lastID {
		return h2ConnError(http2.ErrCodeProtocol) // §5.1: idle stream
	}
	s := hc.streams[f.sid]
	if s == nil {
		return nil // closed: §6.9 allows it for a while
	}
	if s.sendWin+inc > h2MaxWindow {
		hc.resetStream(s.id, http2.ErrCodeFlowControl)
		return nil
	}
	s.sendWin += inc
	hc.pump()
	return nil
}

// onReset closes a stream the client reset (§6.4) and counts it against
// MaxResets (the rapid-reset attack).
func (hc *h2conn) onReset(f *h2frame) error {
	hc.mu.Lock()
	defer hc.mu.Unlock()
	if f.sid > hc.lastID {
		return h2ConnError(http2.ErrCodeProtocol) // §5.1: idle stream
	}
	s := hc.streams[f.sid]
	if s == nil {
		return nil
	}
	s.rerr = errH2StreamReset
	s.reset = true
	hc.closeStream(s)
	return hc.countReset()
}

// countReset counts a stream the client made the server give up;
// under mu. Past MaxResets the connection ends (ENHANCE_YOUR_CALM, as
// §5.4.1 suggests for abuse).
func (hc *h2conn) countReset() error {
	hc.resets++
	hc.c.lst.HTTP2(hc.c.shard, metrics.H2Reset)
	if hc.resets > hc.lim.MaxResets {
		return h2ConnError(http2.ErrCodeEnhanceYourCalm)
	}
	return nil
}

// resetStream sends RST_STREAM with code for stream id and closes the
// stream if it is open; under mu (§5.4.2).
func (hc *h2conn) resetStream(id uint32, code http2.ErrCode) {
	if !hc.dead {
		hc.fr.WriteRSTStream(id, code)
	}
	if s := hc.streams[id]; s != nil {
		s.rerr = errH2StreamReset
		s.reset = true
		hc.closeStream(s)
	}
}

// onData delivers request body bytes to their stream (§6.1), under both
// flow-control windows (§6.9).
func (hc *h2conn) onData(f *h2frame) error {
	hc.mu.Lock()
	defer hc.mu.Unlock()
	id := f.sid
	if id > hc.lastID {
		return h2ConnError(http2.ErrCodeProtocol) // §5.1: idle stream
	}
	flen := int64(f.length) // padding included: it counts (§6.9.1)
	if flen > hc.recvConn {
		return h2ConnError(http2.ErrCodeFlowControl)
	}
	hc.recvConn -= flen
	s := hc.streams[id]
	if s == nil || s.remoteDone {
		// §5.1: closed or half-closed (remote). The bytes still
		// count for the connection: give them back. Frames still
		// in flight when the server ended a stream are few; a flood
		// of them is not.
		hc.creditConn(flen)
		hc.resetStream(id, http2.ErrCodeStreamClosed)
		return hc.idleFrame(true)
	}
	if flen > s.recvWin {
		hc.creditConn(flen)
		hc.resetStream(id, http2.ErrCodeFlowControl)
		return nil
	}
	s.recvWin -= flen
	data := f.p
	if pad := flen - int64(len(data)); pad > 0 {
		hc.creditConn(pad)
		hc.creditStream(s, pad)
	}
	s.got += int64(len(data))
	hc.recvData += int64(len(data))
	if s.declLen >= 0 && s.got > s.declLen {
		// §8.1.1: more than Content-Length announced.
		hc.creditConn(int64(len(data)))
		hc.resetStream(id, http2.ErrCodeProtocol)
		return nil
	}
	if s.handlerDone {
		// Nobody reads any more: give the window back at once.
		hc.creditConn(int64(len(data)))
	} else {
		s.in = append(s.in, data...)
	}
	if f.has(http2.FlagDataEndStream) {
		if s.declLen >= 0 && s.got != s.declLen {
			hc.resetStream(id, http2.ErrCodeProtocol)
			return nil
		}
		hc.remoteEnded(s)
	}
	hc.cond.Broadcast()
	return nil
}
