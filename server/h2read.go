package server

import (
	"encoding/binary"
	"io"

	"golang.org/x/net/http2"
)

// The reader's side of HTTP/2 framing (RFC 9113 §4 and §6): frames are
// parsed where they lie in h2in's buffer, so that a frame costs no copy
// and no allocation. x/net's Framer copied each payload into a buffer of
// its own and allocated a HeadersFrame for every request; it still writes
// the server's frames. Each rule below is the Framer's, with the same
// error values, so that a peer sees the same answer to every frame:
// FuzzH2Frames reads the same bytes with both and compares.

// h2frame is one frame as read. Its views are valid until the next frame
// is read.
type h2frame struct {
	typ   http2.FrameType
	flags http2.Flags
	sid   uint32
	// length is the payload's length on the wire, padding included
	// (DATA's counts against flow control whole).
	length uint32
	// p is the payload without padding, pad length or priority: DATA's
	// data, HEADERS' and CONTINUATION's block fragment, SETTINGS'
	// settings; the whole payload of the other types.
	p []byte
	// dep is the stream a HEADERS (with its PRIORITY flag) or PRIORITY
	// frame depends on.
	dep uint32
	// val is RST_STREAM's and GOAWAY's error code and WINDOW_UPDATE's
	// increment.
	val uint32
}

func (f *h2frame) has(fl http2.Flags) bool { return f.flags&fl != 0 }

// h2reader reads frames from h2in.
type h2reader struct {
	in *h2in
	// max is SETTINGS_MAX_FRAME_SIZE as the server announced it.
	max uint32
	// block is the stream whose header block is open (a HEADERS or
	// CONTINUATION frame without END_HEADERS came last); 0: none.
	block uint32
	// hdr and big hold a frame header or payload that the buffer did
	// not hold whole; big is given back with the buffers while idle.
	hdr [9]byte
	big []byte
}

// next reads one frame into f. Errors are the Framer's: ErrFrameTooLarge,
// a ConnectionError, a StreamError (the frame was consumed), or the
// reader's own.
func (r *h2reader) next(f *h2frame) error {
	h, err := r.take(9)
	if err != nil {
		return err
	}
	*f = h2frame{
		length: uint32(h[0])<<16 | uint32(h[1])<<8 | uint32(h[2]),
		typ:    http2.FrameType(h[3]),
		flags:  http2.Flags(h[4]),
		sid:    binary.BigEndian.Uint32(h[5:]) & (1<<31 - 1),
	}
	if f.length > r.max {
		return http2.ErrFrameTooLarge
	}
	if err := r.order(f); err != nil {
		return err
	}
	if f.p, err = r.take(int(f.length)); err != nil {
		return err
	}
	return f.parse()
}

// take returns the next n bytes: a view of the read buffer when it holds
// them (the usual case), else a copy in hdr or big.
func (r *h2reader) take(n int) ([]byte, error) {
	if v, ok := r.in.view(n); ok {
		return v, nil
	}
	buf := r.hdr[:]
	if n > len(buf) {
		if cap(r.big) < n {
			r.big = make([]byte, n)
		}
		buf = r.big
	}
	_, err := io.ReadFull(r.in, buf[:n])
	return buf[:n], err
}

// order checks that a header block's frames are contiguous (§6.10).
func (r *h2reader) order(f *h2frame) error {
	if r.block != 0 {
		if f.typ != http2.FrameContinuation || f.sid != r.block {
			return http2.ConnectionError(http2.ErrCodeProtocol)
		}
	} else if f.typ == http2.FrameContinuation {
		return http2.ConnectionError(http2.ErrCodeProtocol)
	}
	if f.typ == http2.FrameHeaders || f.typ == http2.FrameContinuation {
		r.block = 0
		if !f.has(http2.FlagHeadersEndHeaders) {
			r.block = f.sid
		}
	}
	return nil
}

// release gives back the buffer of frames larger than the read buffer.
func (r *h2reader) release() { r.big = nil }

// parse checks f's payload by its type and takes its fields out.
func (f *h2frame) parse() error {
	p := f.p
	switch f.typ {
	case http2.FrameData:
		if f.sid == 0 {
			return http2.ConnectionError(http2.ErrCodeProtocol)
		}
		p, pad, err := unpad(p, f.has(http2.FlagDataPadded))
		if err != nil {
			return err
		}
		if pad > len(p) {
			return http2.ConnectionError(http2.ErrCodeProtocol)
		}
		f.p = p[:len(p)-pad]
	case http2.FrameHeaders:
		if f.sid == 0 {
			return http2.ConnectionError(http2.ErrCodeProtocol)
		}
		p, pad, err := unpad(p, f.has(http2.FlagHeadersPadded))
		if err != nil {
			return err
		}
		if f.has(http2.FlagHeadersPriority) {
			if len(p) < 5 {
				return io.ErrUnexpectedEOF
			}
			f.dep = binary.BigEndian.Uint32(p) & (1<<31 - 1)
			p = p[5:]
		}
		if pad > len(p) {
			return http2.StreamError{StreamID: f.sid, Code: http2.ErrCodeProtocol}
		}
		f.p = p[:len(p)-pad]
	case http2.FramePriority:
		if f.sid == 0 {
			return http2.ConnectionError(http2.ErrCodeProtocol)
		}
		if len(p) != 5 {
			return http2.ConnectionError(http2.ErrCodeFrameSize)
		}
		f.dep = binary.BigEndian.Uint32(p) & (1<<31 - 1)
	case http2.FrameRSTStream:
		if len(p) != 4 {
			return http2.ConnectionError(http2.ErrCodeFrameSize)
		}
		if f.sid == 0 {
			return http2.ConnectionError(http2.ErrCodeProtocol)
		}
		f.val = binary.BigEndian.Uint32(p)
	case http2.FrameSettings:
		return f.parseSettings()
	case http2.FramePushPromise:
		// A client never sends one (process ends the connection); its
		// form is checked first, as the Framer does.
		if f.sid == 0 {
			return http2.ConnectionError(http2.ErrCodeProtocol)
		}
		p, pad, err := unpad(p, f.has(http2.FlagPushPromisePadded))
		if err != nil {
			return err
		}
		if len(p) < 4 {
			return io.ErrUnexpectedEOF
		}
		if p = p[4:]; pad > len(p) {
			return http2.ConnectionError(http2.ErrCodeProtocol)
		}
	case http2.FramePing:
		if len(p) != 8 {
			return http2.ConnectionError(http2.ErrCodeFrameSize)
		}
		if f.sid != 0 {
			return http2.ConnectionError(http2.ErrCodeProtocol)
		}
	case http2.FrameGoAway:
		if f.sid != 0 {
			return http2.ConnectionError(http2.ErrCodeProtocol)
		}
		if len(p) < 8 {
			return http2.ConnectionError(http2.ErrCodeFrameSize)
		}
		f.val = binary.BigEndian.Uint32(p[4:])
	case http2.FrameWindowUpdate:
		if len(p) != 4 {
			return http2.ConnectionError(http2.ErrCodeFrameSize)
		}
		f.val = binary.BigEndian.Uint32(p) & (1<<31 - 1)
		if f.val == 0 {
			if f.sid == 0 {
				return http2.ConnectionError(http2.ErrCodeProtocol)
			}
			return http2.StreamError{StreamID: f.sid, Code: http2.ErrCodeProtocol}
		}
	case http2.FrameContinuation:
		if f.sid == 0 {
			return http2.ConnectionError(http2.ErrCodeProtocol)
		}
	case http2.FramePriorityUpdate:
		// RFC 9218 §7.1; ignored once read, as PRIORITY is.
		if f.sid != 0 {
			return http2.ConnectionError(http2.ErrCodeProtocol)
		}
		if len(p) < 4 {
			return http2.ConnectionError(http2.ErrCodeFrameSize)
		}
		if binary.BigEndian.Uint32(p)&(1<<31-1) == 0 {
			return http2.ConnectionError(http2.ErrCodeProtocol)
		}
	}
	return nil // §5.5: other types are read and ignored
}

// unpad takes the pad length off the payload of a frame with its PADDED
// flag set (§6.1).
func unpad(p []byte, padded bool) (rest []byte, pad int, err error) {
	if !padded {
		return p, 0, nil
	}
	if len(p) == 0 {
		return nil, 0, io.ErrUnexpectedEOF
	}
	return p[1:], int(p[0]), nil
}

// parseSettings checks a SETTINGS frame's form (§6.5); each setting's
// value is checked as it is applied (onSettings).
func (f *h2frame) parseSettings() error {
	if f.has(http2.FlagSettingsAck) && f.length > 0 {
		return http2.ConnectionError(http2.ErrCodeFrameSize)
	}
	if f.sid != 0 {
		return http2.ConnectionError(http2.ErrCodeProtocol)
	}
	if len(f.p)%6 != 0 {
		return http2.ConnectionError(http2.ErrCodeFrameSize)
	}
	// The Framer refuses the first SETTINGS_INITIAL_WINDOW_SIZE over
	// the maximum window before any setting applies.
	for s := f.p; len(s) > 0; s = s[6:] {
		if http2.SettingID(binary.BigEndian.Uint16(s)) == http2.SettingInitialWindowSize {
			if binary.BigEndian.Uint32(s[2:]) > 1<<31-1 {
				return http2.ConnectionError(http2.ErrCodeFlowControl)
			}
			break
		}
	}
	return nil
}

// setting returns the i-th setting of a SETTINGS frame.
func (f *h2frame) setting(i int) http2.Setting {
	s := f.p[6*i:]
	return http2.Setting{ID: http2.SettingID(binary.BigEndian.Uint16(s)), Val: binary.BigEndian.Uint32(s[2:])}
}
