package server

import (
	"errors"
	"io"

	"github.com/quic-go/quic-go/quicvarint"
)

// HTTP/3 frames (RFC 9114 §7): a variable-length integer type, a
// variable-length integer length, then the payload. Only the frame head is
// parsed here; payloads are read by the stream that owns them (a DATA
// payload straight into the handler's buffer).

// Frame types (§7.2, §11.2.1).
const (
	h3FrameData        = 0x00
	h3FrameHeaders     = 0x01
	h3FrameCancelPush  = 0x03
	h3FrameSettings    = 0x04
	h3FramePushPromise = 0x05
	h3FrameGoaway      = 0x07
	h3FrameMaxPushID   = 0x0d
)

// h3FrameH2Only reports the HTTP/2 frame types that have no HTTP/3 meaning
// and are an error on any stream (§7.2.8: PRIORITY, PING, WINDOW_UPDATE,
// CONTINUATION).
func h3FrameH2Only(t uint64) bool { return t == 0x02 || t == 0x06 || t == 0x08 || t == 0x09 }

// Unidirectional stream types (§6.2, RFC 9204 §4.2).
const (
	h3StreamControl = 0x00
	h3StreamPush    = 0x01
	h3StreamEncoder = 0x02
	h3StreamDecoder = 0x03
)

// Settings identifiers (§7.2.4.1, RFC 9204 §5).
const (
	h3SettingQPACKTable    = 0x01
	h3SettingMaxFieldSize  = 0x06
	h3SettingQPACKBlocked  = 0x07
	h3SettingH2Reserved2   = 0x02 // §7.2.4.1: HTTP/2's settings that
	h3SettingH2Reserved5   = 0x05 // have no HTTP/3 meaning are an error
	h3SettingH2Reserved3   = 0x03
	h3SettingH2Reserved4   = 0x04
	h3MaxSettingsFrameSize = 4 << 10 // a client's SETTINGS: a few pairs
)

// Error codes (§8.1, RFC 9204 §6).
const (
	h3NoError              = 0x100
	h3GeneralProtocolError = 0x101
	h3InternalError        = 0x102
	h3StreamCreationError  = 0x103
	h3ClosedCriticalStream = 0x104
	h3FrameUnexpected      = 0x105
	h3FrameError           = 0x106
	h3ExcessiveLoad        = 0x107
	h3IDError              = 0x108
	h3SettingsError        = 0x109
	h3MissingSettings      = 0x10a
	h3RequestRejected      = 0x10b
	h3RequestCancelled     = 0x10c
	h3RequestIncomplete    = 0x10d
	h3MessageError         = 0x10e
	h3QPACKDecompression   = 0x200
)

var (
	errH3Frame = errors.New("server: malformed http3 frame")
	// errH3FrameTooBig is a frame whose announced length is over the
	// reader's bound for its type (the bound is the caller's).
	errH3FrameTooBig = errors.New("server: http3 frame too large")
)

// parseH3FrameHead parses a frame head at the start of b. It returns the
// type, the payload length and the head's length, or n == 0 when b holds
// only part of a head (nothing consumed), or errH3Frame.
func parseH3FrameHead(b []byte) (typ, length uint64, n int, err error) {
	typ, tn, err := quicvarint.Parse(b)
	if err != nil {
		return 0, 0, 0, nil // io.EOF: a partial varint
	}
	length, ln, err := quicvarint.Parse(b[tn:])
	if err != nil {
		return 0, 0, 0, nil
	}
	return typ, length, tn + ln, nil
}

// appendH3FrameHead appends a frame head.
func appendH3FrameHead(b []byte, typ, length uint64) []byte {
	b = quicvarint.Append(b, typ)
	return quicvarint.Append(b, length)
}

// h3Reader reads frames from a QUIC stream through a small buffer: heads
// and small payloads (HEADERS, SETTINGS) come from buf, and a DATA payload
// beyond what buf holds is read straight into the caller's slice.
type h3Reader struct {
	src  io.Reader
	buf  []byte
	r, w int
	// eof: src returned io.EOF after the bytes in buf[r:w] (the FIN came
	// with them).
	eof bool
	err error
}

// h3ReadBuf is the buffer size: a typical request's HEADERS frame and the
// first part of its body arrive in one read.
const h3ReadBuf = 4 << 10

func (fr *h3Reader) reset(src io.Reader) {
	if fr.buf == nil {
		fr.buf = make([]byte, h3ReadBuf)
	}
	fr.src, fr.r, fr.w, fr.eof, fr.err = src, 0, 0, false, nil
}

// fill reads more bytes into buf, compacting first; false once the
// source has ended or failed (fr.err, io.EOF for a clean end).
func (fr *h3Reader) fill() bool {
	if fr.eof || fr.err != nil {
		if fr.err == nil {
			fr.err = io.EOF
		}
		return false
	}
	if fr.r > 0 {
		fr.w = copy(fr.buf, fr.buf[fr.r:fr.w])
		fr.r = 0
	}
	n, err := fr.src.Read(fr.buf[fr.w:])
	fr.w += n
	if err == io.EOF {
		fr.eof = true
		return n > 0
	}
	if err != nil {
		fr.err = err
		return n > 0
	}
	return true
}

// ended reports that the stream's FIN has been read and every byte before
// it consumed.
func (fr *h3Reader) ended() bool { return fr.eof && fr.r == fr.w }

// next reads the next frame head. At a clean end of stream between
// frames it returns io.EOF; a stream that ends inside a head is errH3Frame.
func (fr *h3Reader) next() (typ, length uint64, err error) {
	for {
		typ, length, n, err := parseH3FrameHead(fr.buf[fr.r:fr.w])
		if err != nil {
			return 0, 0, err
		}
		if n > 0 {
			fr.r += n
			return typ, length, nil
		}
		if !fr.fill() {
			if fr.err == io.EOF && fr.r < fr.w {
				return 0, 0, errH3Frame
			}
			return 0, 0, fr.err
		}
	}
}

// payload returns the next length bytes (length <= len(buf)) as a view
// valid until the next call.
func (fr *h3Reader) payload(length int) ([]byte, error) {
	if length > len(fr.buf) {
		return nil, errH3FrameTooBig
	}
	for fr.w-fr.r < length {
		if !fr.fill() {
			if fr.err == io.EOF {
				return nil, errH3Frame
			}
			return nil, fr.err
		}
	}
	p := fr.buf[fr.r : fr.r+length]
	fr.r += length
	return p, nil
}

// payloadInto reads the next length bytes into dst (a header block longer
// than buf); dst must have room.
func (fr *h3Reader) payloadInto(dst []byte) error {
	n := copy(dst, fr.buf[fr.r:fr.w])
	fr.r += n
	if n == len(dst) {
		return nil
	}
	if fr.eof {
		return errH3Frame
	}
	if _, err := io.ReadFull(fr.src, dst[n:]); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return errH3Frame
		}
		return err
	}
	return nil
}

// skip discards length payload bytes (an unknown frame type, §9).
func (fr *h3Reader) skip(length uint64) error {
	for length > 0 {
		if fr.r == fr.w && !fr.fill() {
			if fr.err == io.EOF {
				return errH3Frame
			}
			return fr.err
		}
		n := min(uint64(fr.w-fr.r), length)
		fr.r += int(n)
		length -= n
	}
	return nil
}

// read reads up to len(p) payload bytes of a DATA frame (the caller
// bounds p by what is left of the frame): buffered bytes first, then
// straight from the stream. A stream that ends early is errH3Frame.
func (fr *h3Reader) read(p []byte) (int, error) {
	if fr.r < fr.w {
		n := copy(p, fr.buf[fr.r:fr.w])
		fr.r += n
		return n, nil
	}
	if fr.eof || fr.err != nil {
		if fr.err != nil && fr.err != io.EOF {
			return 0, fr.err
		}
		return 0, errH3Frame
	}
	n, err := fr.src.Read(p)
	if err == io.EOF {
		fr.eof = true
		if n == 0 {
			return 0, errH3Frame
		}
		return n, nil
	}
	if err != nil {
		fr.err = err
	}
	return n, err
}
