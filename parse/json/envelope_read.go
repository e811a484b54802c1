package json

import (
	flatbuffers "github.com/google/flatbuffers/go"

	"github.com/simdedge/simdedge/parse/json/internal/envelopefb"
)

// EnvelopeError reports a malformed envelope; it never holds buffer bytes.
type EnvelopeError struct {
	Op  string // "read-envelope"
	Err error
}

func (e *EnvelopeError) Error() string { return "json: " + e.Op + ": " + trimPrefix(e.Err.Error()) }

// Unwrap returns the sentinel.
func (e *EnvelopeError) Unwrap() error { return e.Err }

// Envelope is a verified request envelope. Its accessors return views into
// the buffer given to ReadEnvelope, which must outlive them.
type Envelope struct {
	req envelopefb.Request
	url envelopefb.URL
	has bool // URL present
}

// ReadEnvelope verifies buf (untrusted: from the network or a body sent as
// application/x-flatbuffers) and returns a reader. A malformed buffer gives an
// error; no accessor runs before the whole buffer is verified, so none can
// read out of bounds or panic.
func ReadEnvelope(buf []byte) (Envelope, error) {
	root, err := verifyEnvelope(buf)
	if err != nil {
		return Envelope{}, &EnvelopeError{Op: "read-envelope", Err: err}
	}
	var e Envelope
	e.req.Init(buf, flatbuffers.UOffsetT(root.pos))
	e.has = e.req.Url(&e.url) != nil
	return e, nil
}

// Method returns the request method bytes.
func (e *Envelope) Method() []byte { return e.req.MethodBytes() }

// Target returns the request-target bytes.
func (e *Envelope) Target() []byte { return e.req.TargetBytes() }

// Version returns the HTTP version as major*10 + minor.
func (e *Envelope) Version() uint8 { return e.req.Version() }

// Body returns the body bytes.
func (e *Envelope) Body() []byte { return e.req.BodyBytes() }

// NumHeaders returns the number of header fields.
func (e *Envelope) NumHeaders() int { return e.req.HeadersLength() }

// Header returns header i (0 <= i < NumHeaders; otherwise nil, nil).
func (e *Envelope) Header(i int) (name, value []byte) {
	if i < 0 || i >= e.NumHeaders() {
		return nil, nil
	}
	var h envelopefb.Header
	e.req.Headers(&h, i)
	return h.NameBytes(), h.ValueBytes()
}

// URL returns the URL components and whether the envelope has them.
func (e *Envelope) URL() (URLParts, bool) {
	if !e.has {
		return URLParts{}, false
	}
	u := &e.url
	return URLParts{
		Href: u.HrefBytes(), Scheme: u.SchemeBytes(), Username: u.UsernameBytes(),
		Password: u.PasswordBytes(), Host: u.HostBytes(), Port: u.PortBytes(),
		Path: u.PathBytes(), Query: u.QueryBytes(), Fragment: u.FragmentBytes(),
	}, true
}
