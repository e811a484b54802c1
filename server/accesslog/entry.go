package accesslog

import "time"

// Entry is one request's line. The byte slices are views into the
// request's buffers: Log.Write formats them before it returns and keeps
// none.
type Entry struct {
	// Time is when the response ended; Duration how long the request
	// took from its complete head. Shard.Write raises a Time older than
	// the shard's last line, or than the start of the writer's round
	// the line missed, to that time (microseconds later, as a rule: the
	// time between the end and the Write): that is what keeps a file's
	// lines in time order (writer.go).
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
	// maxLine is the longest line there can be (lineBound of an entry
	// with every field at its bound): under bufSize, so one line always
	// fits an empty buffer.
	maxLine = fixedBound + escapeMax*maxTarget + 9*(fieldOverhead+escapeMax*maxField)
	// fixedBound bounds a line's parts other than the escaped fields:
	// names and punctuation (about 250 bytes), the time, five numbers of
	// at most 20 digits, the protocol and TLS names.
	fixedBound = 1024
	// fieldOverhead is a field's quotes and cut mark ("...").
	fieldOverhead = 5
	// escapeMax is the most bytes one input byte becomes (\u00XX).
	escapeMax = 6
)

// lineBound is an upper bound of e's line in either format: every field
// cut to its bound and every byte escaped at the widest.
func lineBound(e *Entry) int {
	n := fixedBound + escapeMax*min(len(e.Target), maxTarget)
	for _, l := range [...]int{len(e.Remote), len(e.Method), len(e.Host), len(e.Route), len(e.Upstream),
		len(e.UpstreamTarget), len(e.RequestID), len(e.UserAgent), len(e.Referer)} {
		n += fieldOverhead + escapeMax*min(l, maxField)
	}
	return n
}
