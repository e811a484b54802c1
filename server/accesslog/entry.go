package accesslog

import "time"

// Entry is one request's line. The byte slices are views into the
// request's buffers: Log.Write formats them before it returns and keeps
// none.
type Entry struct {
	// Time is when the response ended; Duration how long the request
	// took from its complete head.
	Time     time.Time
	Duration time.Duration
	// Remote is the client's IP address in text form.
	Remote []byte
	Method []byte
	Host   []byte
	// Target is the request target as sent (path and query).
	Target []byte
	// Proto is "HTTP/1.1", "HTTP/1.0", ...
	Proto             string
	Status            int
	BytesIn, BytesOut int64
	// Route is the matched route's name; Upstream and UpstreamTarget the
	// upstream and the target that served a proxied request (empty
	// otherwise).
	Route          string
	Upstream       string
	UpstreamTarget string
	RequestID      []byte
	UserAgent      []byte
	Referer        []byte
	// TLS is the negotiated TLS version's name ("TLS1.3"), empty for
	// plain connections.
	TLS string
}

// Field bounds: a field longer than its bound is cut (JSON keeps valid,
// the cut is marked with "..."), so that one line always fits a buffer and
// the scratch buffer never grows. The target gets the most room (long
// query strings are common and useful); the rest are headers rarely
// longer than a few hundred bytes.
const (
	maxTarget = 4096
	maxField  = 512
	// maxLine is the longest line formatFor can build: every field at its
	// bound with every byte escaped (6 bytes: \u00XX), plus the fixed
	// parts (names, numbers, time).
	maxLine = 6*(maxTarget+9*maxField) + 1024
)
