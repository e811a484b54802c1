package server

// HTTP2Limits bound what one HTTP/2 connection may make the server hold
// (RFC 9113 §6.5.2). Zero means the default; the defaults follow nginx and
// Go's server where they agree and the smaller where they do not.
type HTTP2Limits struct {
	// MaxConcurrentStreams is SETTINGS_MAX_CONCURRENT_STREAMS: the
	// streams a client may have open at once. A HEADERS frame beyond it
	// is refused (RST_STREAM REFUSED_STREAM). It also bounds the handler
	// goroutines of a connection: a stream whose handler still runs
	// after a reset keeps its slot until the handler returns.
	MaxConcurrentStreams int
	// MaxHeaderListSize is SETTINGS_MAX_HEADER_LIST_SIZE: the decoded
	// size of a request's fields (RFC 9113 §6.5.2: name + value + 32 per
	// field). Beyond it the stream is answered 431 and no more of the
	// block is kept; an encoded header block (HEADERS plus CONTINUATION)
	// beyond it ends the connection (GOAWAY ENHANCE_YOUR_CALM), before
	// any decoding.
	MaxHeaderListSize int
	// MaxFrameSize is SETTINGS_MAX_FRAME_SIZE: the largest frame payload
	// the server reads (16 KiB to 16 MiB - 1).
	MaxFrameSize int
	// InitialStreamWindow is SETTINGS_INITIAL_WINDOW_SIZE: the request
	// body bytes a stream may send before the handler reads them, and so
	// the memory a stream's body may hold.
	InitialStreamWindow int
	// ConnWindow is the connection's receive window (raised from the
	// protocol's 65,535 by a WINDOW_UPDATE on stream 0): the body bytes
	// of all streams together that may wait unread.
	ConnWindow int
	// MaxResets bounds the streams a client may reset (or have refused)
	// beyond the ones that completed, per connection, before the server
	// ends the connection with GOAWAY ENHANCE_YOUR_CALM (the rapid-reset
	// attack, CVE-2023-44487).
	MaxResets int
	// MaxContinuations bounds the CONTINUATION frames of one header
	// block; one more ends the connection with GOAWAY ENHANCE_YOUR_CALM
	// (CVE-2024-27316 and CVE-2024-28182: a block of empty or one-byte
	// fragments never reaches MaxHeaderListSize).
	MaxContinuations int
	// MaxIdleFrames is a connection's budget of frames that make no
	// progress: empty DATA without END_STREAM, HEADERS and CONTINUATION
	// with empty fragments, WINDOW_UPDATE, PING, SETTINGS, PRIORITY,
	// GOAWAY, frames of unknown types, DATA on a stream that is not open,
	// and header blocks that open no stream. Useful work refills it
	// (h2budget.go); past it the connection ends with GOAWAY
	// ENHANCE_YOUR_CALM (the empty-frames flood, CVE-2019-9518).
	MaxIdleFrames int
}

// Defaults of HTTP2Limits.
const (
	// DefaultH2MaxConcurrentStreams: nginx's 128 and Go's 250 both serve
	// browsers well; 100 is the floor RFC 9113 §6.5.2 recommends.
	DefaultH2MaxConcurrentStreams = 100
	// DefaultH2MaxHeaderListSize matches the HTTP/1.1 head limit's order
	// of magnitude (parse/http DefaultMaxHeaderBytes) with HPACK's 32
	// bytes of overhead per field on top.
	DefaultH2MaxHeaderListSize = 64 << 10
	// DefaultH2MaxFrameSize is the protocol's initial value: larger
	// frames only make the per-connection read buffer larger.
	DefaultH2MaxFrameSize = 16 << 10
	// DefaultH2InitialStreamWindow: 256 KiB lets one upload stream run at
	// full speed on a LAN (nginx uses 64 KiB buffers, Go 1 MiB windows).
	DefaultH2InitialStreamWindow = 256 << 10
	// DefaultH2ConnWindow: four streams' windows at once.
	DefaultH2ConnWindow = 1 << 20
	// DefaultH2MaxResets: a browser cancels a few streams per page; an
	// attacker resets thousands per second.
	DefaultH2MaxResets = 200
	// DefaultH2MaxContinuations is nghttp2's (8): a block of
	// MaxHeaderListSize in 16 KiB frames needs 4, and every client
	// known sends frames of the peer's frame size.
	DefaultH2MaxContinuations = 8
	// DefaultH2MaxIdleFrames is nghttp2's glitch burst (1,000): a
	// browser spends a few control frames per page, an attacker
	// millions per second.
	DefaultH2MaxIdleFrames = 1000
)

// Bounds of the protocol (RFC 9113 §6.5.2, §6.9.1).
const (
	h2MinFrameSize  = 1 << 14
	h2MaxFrameSize  = 1<<24 - 1
	h2MaxWindow     = 1<<31 - 1
	h2InitialWindow = 65535
)

// WithDefaults returns l with every zero field set to its default.
func (l HTTP2Limits) WithDefaults() HTTP2Limits {
	l.normalize()
	return l
}

func (l *HTTP2Limits) normalize() {
	if l.MaxConcurrentStreams <= 0 {
		l.MaxConcurrentStreams = DefaultH2MaxConcurrentStreams
	}
	if l.MaxHeaderListSize <= 0 {
		l.MaxHeaderListSize = DefaultH2MaxHeaderListSize
	}
	switch {
	case l.MaxFrameSize <= 0:
		l.MaxFrameSize = DefaultH2MaxFrameSize
	case l.MaxFrameSize < h2MinFrameSize:
		l.MaxFrameSize = h2MinFrameSize
	case l.MaxFrameSize > h2MaxFrameSize:
		l.MaxFrameSize = h2MaxFrameSize
	}
	if l.InitialStreamWindow <= 0 {
		l.InitialStreamWindow = DefaultH2InitialStreamWindow
	}
	l.InitialStreamWindow = min(l.InitialStreamWindow, h2MaxWindow)
	if l.ConnWindow <= 0 {
		l.ConnWindow = DefaultH2ConnWindow
	}
	l.ConnWindow = max(min(l.ConnWindow, h2MaxWindow), h2InitialWindow)
	if l.MaxResets <= 0 {
		l.MaxResets = DefaultH2MaxResets
	}
	if l.MaxContinuations <= 0 {
		l.MaxContinuations = DefaultH2MaxContinuations
	}
	if l.MaxIdleFrames <= 0 {
		l.MaxIdleFrames = DefaultH2MaxIdleFrames
	}
}
