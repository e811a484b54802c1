package http

import (
	"math"

	"github.com/simdedge/simdedge/internal/ascii"
)

// Message framing: RFC 9112 §6 (message body length), §9.3 (persistence)
// and RFC 9110 §7.6.1 (Connection), §7.8 (Upgrade), §10.1.1 (Expect).

// BodyKind says how the body that follows a head is delimited.
type BodyKind uint8

const (
	// BodyNone: no body follows; the next message starts right after
	// the head.
	BodyNone BodyKind = iota
	// BodyLength: exactly ContentLength bytes follow (LengthDecoder).
	BodyLength
	// BodyChunked: a chunked body follows (ChunkedDecoder).
	BodyChunked
	// BodyUntilClose: the body runs until the connection closes
	// (responses only, RFC 9112 §6.3 rule 8).
	BodyUntilClose
)

func (k BodyKind) String() string {
	switch k {
	case BodyNone:
		return "none"
	case BodyLength:
		return "length"
	case BodyChunked:
		return "chunked"
	case BodyUntilClose:
		return "until-close"
	}
	return "unknown"
}

// framing accumulates what the framing fields of one head say.
type framing struct {
	clSeen  bool
	cl      int64
	teSeen  bool
	chunked bool // the last coding seen so far is chunked
	// chunkedEarly: chunked appeared before another coding.
	chunkedEarly bool
	// unknownCoding: a coding outside knownCodings appeared.
	unknownCoding bool
	// otherCoding: a coding other than chunked appeared.
	otherCoding bool
	hosts       int
	host        []byte
	close       bool // Connection: close
	keepAlive   bool // Connection: keep-alive
	connUpg     bool // Connection: upgrade
	upgrade     []byte
	expect100   bool
	// expectOther: an expectation other than 100-continue (a request
	// with one is refused with 417; responses ignore the field).
	expectOther bool
}

// maxContentLengthDigits is the most decimal digits an int64 can need; a
// longer run is an overflow whatever its value.
const maxContentLengthDigits = 19

// field records one framing field.
func (f *framing) field(k fieldKind, v []byte) error {
	switch k {
	case fieldHost:
		f.hosts++
		if f.hosts == 1 {
			f.host = v
		}
	case fieldExpect:
		// RFC 9110 §10.1.1: Expect is a list, 100-continue is the only
		// expectation defined, and the comparison is case-insensitive.
		// Any other member may be answered with 417, which is what a
		// server that cannot meet it should say rather than ignore it.
		if ascii.EqualFold(v, "100-continue") {
			f.expect100 = true
			break
		}
		listItems(v, func(item []byte) error {
			if ascii.EqualFold(item, "100-continue") {
				f.expect100 = true
			} else {
				f.expectOther = true
			}
			return nil
		})
	case fieldUpgrade:
		f.upgrade = v
	case fieldConnection:
		return f.connection(v)
	case fieldContentLength:
		n, err := parseContentLength(v)
		if err != nil {
			return err
		}
		// RFC 9110 §8.6: repeated fields (or a list) with one value may
		// be accepted as that value; differing values must be rejected.
		if f.clSeen && f.cl != n {
			return ErrConflictingContentLength
		}
		f.clSeen, f.cl = true, n
	case fieldTransferEncoding:
		f.teSeen = true
		return f.transferEncoding(v)
	}
	return nil
}

// parseContentLength parses 1*DIGIT, or a comma-separated list of
// identical 1*DIGIT values (RFC 9110 §8.6). Signs, spaces inside a number,
// empty elements and values beyond int64 are invalid.
func parseContentLength(v []byte) (int64, error) {
	var out int64 = -1
	for {
		i := 0
		for i < len(v) && v[i] >= '0' && v[i] <= '9' {
			i++
		}
		if i == 0 {
			return 0, ErrInvalidContentLength
		}
		if i > maxContentLengthDigits {
			return 0, ErrInvalidContentLength
		}
		var n uint64
		for _, d := range v[:i] {
			n = n*10 + uint64(d-'0')
		}
		if n > math.MaxInt64 {
			return 0, ErrInvalidContentLength
		}
		if out >= 0 && int64(n) != out {
			return 0, ErrConflictingContentLength
		}
		out = int64(n)
		v = v[i:]
		for len(v) > 0 && ascii.IsOWS(v[0]) {
			v = v[1:]
		}
		if len(v) == 0 {
			return out, nil
		}
		if v[0] != ',' {
			return 0, ErrInvalidContentLength
		}
		v = v[1:]
		for len(v) > 0 && ascii.IsOWS(v[0]) {
			v = v[1:]
		}
	}
}

// listItems calls fn for each element of a comma-separated list
// (RFC 9110 §5.6.1), trimmed of OWS; an element is everything up to the
// next comma outside a quoted-string. Empty elements are skipped, as the
// RFC requires of recipients.
func listItems(v []byte, fn func(item []byte) error) error {
	for len(v) > 0 {
		i, quoted := 0, false
		for ; i < len(v); i++ {
			switch c := v[i]; {
			case c == '"':
				quoted = !quoted
			case c == '\\' && quoted:
				i++
			case c == ',' && !quoted:
				goto split
			}
		}
	split:
		item := ascii.TrimOWS(v[:min(i, len(v))])
		if len(item) > 0 {
			if err := fn(item); err != nil {
				return err
			}
		}
		if i >= len(v) {
			return nil
		}
		v = v[i+1:]
	}
	return nil
}

// connection records the options of RFC 9110 §7.6.1 that matter here.
// Unknown options are connection-specific field names and are ignored.
// Options are tokens, so the list splits at every comma (no quoted
// strings); the loop is written out rather than using listItems because
// nearly every request carries this field.
func (f *framing) connection(v []byte) error {
	// Fast path: the value is one of the two options nearly every
	// request sends (foldedWords is exact for values too).
	switch {
	case len(v) == len("keep-alive") && foldedWords(v) == keepAliveKey:
		f.keepAlive = true
		return nil
	case len(v) == len("close") && foldedWords(v) == closeKey:
		f.close = true
		return nil
	}
	for len(v) > 0 {
		i := 0
		for i < len(v) && v[i] != ',' {
			i++
		}
		opt := ascii.TrimOWS(v[:i])
		switch len(opt) {
		case len("close"):
			f.close = f.close || ascii.EqualFold(opt, "close")
		case len("keep-alive"):
			f.keepAlive = f.keepAlive || ascii.EqualFold(opt, "keep-alive")
		case len("upgrade"):
			f.connUpg = f.connUpg || ascii.EqualFold(opt, "upgrade")
		}
		if i == len(v) {
			break
		}
		v = v[i+1:]
	}
	return nil
}

var (
	keepAliveKey = foldedWords([]byte("keep-alive"))
	closeKey     = foldedWords([]byte("close"))
)

// knownCodings are the transfer codings of the IANA registry that a
// recipient can name (RFC 9112 §7); anything else is refused with 501
// (RFC 9112 §6.1), since its framing cannot be understood.
var knownCodings = [...]string{"chunked", "gzip", "x-gzip", "deflate", "compress", "x-compress"}

// transferEncoding checks one Transfer-Encoding field (RFC 9112 §6.1):
// every coding known and without syntax errors. Where chunked appears is
// recorded for frame: several fields form one list in order, so chunked in
// an earlier field followed by another coding is not final either.
func (f *framing) transferEncoding(v []byte) error {
	items := 0
	err := listItems(v, func(item []byte) error {
		items++
		name := item
		params := false
		for i, c := range item {
			if c == ';' || ascii.IsOWS(c) {
				name, params = item[:i], true
				break
			}
		}
		if len(name) == 0 {
			return ErrInvalidTransferEncoding
		}
		for _, c := range name {
			if !tcharSet[c] {
				return ErrInvalidTransferEncoding
			}
		}
		if f.chunked {
			// A coding after chunked: the body's end cannot be found
			// from the chunks (requests are rejected, responses run
			// until close).
			f.chunkedEarly = true
			f.chunked = false
		}
		known := false
		for _, k := range knownCodings {
			if ascii.EqualFold(name, k) {
				known = true
				break
			}
		}
		if !known {
			// Requests are refused with 501 (request.frame); a response
			// whose final coding is not chunked runs until close anyway.
			f.unknownCoding = true
		}
		if ascii.EqualFold(name, "chunked") {
			if params {
				return ErrInvalidTransferEncoding // chunked has no parameters
			}
			f.chunked = true
		} else {
			f.otherCoding = true
		}
		// Parameters of other codings do not affect framing; the list
		// split kept quoted commas together, and the field walk already
		// rejected control bytes.
		return nil
	})
	if err == nil && items == 0 {
		return ErrInvalidTransferEncoding
	}
	return err
}
