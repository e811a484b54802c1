package envelope

import (
	"strings"

	flatbuffers "github.com/google/flatbuffers/go"

	"github.com/simdedge/simdedge/parse/json/envelope/internal/envelopefb"
)

// Error reports a malformed envelope; it never holds buffer bytes.
type Error struct {
	Op  string // "read"
	Err error
}

func (e *Error) Error() string {
	return "envelope: " + e.Op + ": " + strings.TrimPrefix(e.Err.Error(), "envelope: ")
}

// Unwrap returns the sentinel.
func (e *Error) Unwrap() error { return e.Err }

// View is a verified request envelope. Its accessors return views into
// the buffer given to Read, which must outlive them.
type View struct {
	req envelopefb.Request
	url envelopefb.URL
	has bool // URL present
	// The headers vector as verified, so that Header needs no vtable
	// lookups on the root table.
	buf                []byte
	hdrStart, hdrCount int
}

// Read verifies buf (untrusted: from the network or a body sent as
// application/x-flatbuffers) and returns a reader. A malformed buffer gives an
// error; no accessor runs before the whole buffer is verified, so none can
// read out of bounds or panic.
func Read(buf []byte) (View, error) {
	ver, err := verify(buf)
	if err != nil {
		return View{}, &Error{Op: "read", Err: err}
	}
	e := View{buf: buf, hdrStart: ver.hdrStart, hdrCount: ver.hdrCount}
	e.req.Init(buf, flatbuffers.UOffsetT(ver.root.pos))
	e.has = e.req.Url(&e.url) != nil
	return e, nil
}

// Method returns the request method bytes.
func (e *View) Method() []byte { return e.req.MethodBytes() }

// Target returns the request-target bytes.
func (e *View) Target() []byte { return e.req.TargetBytes() }

// Version returns the HTTP version as major*10 + minor.
func (e *View) Version() uint8 { return e.req.Version() }

// Body returns the body bytes.
func (e *View) Body() []byte { return e.req.BodyBytes() }

// NumHeaders returns the number of header fields.
func (e *View) NumHeaders() int { return e.hdrCount }

// Header returns header i (0 <= i < NumHeaders; otherwise nil, nil).
func (e *View) Header(i int) (name, value []byte) {
	if i < 0 || i >= e.NumHeaders() {
		return nil, nil
	}
	// Verified: the element and the table it points to are in bounds.
	at := e.hdrStart + i*flatbuffers.SizeUOffsetT
	var h envelopefb.Header
	h.Init(e.buf, flatbuffers.UOffsetT(at)+flatbuffers.GetUOffsetT(e.buf[at:]))
	return h.NameBytes(), h.ValueBytes()
}

// URL returns the URL components and whether the envelope has them.
func (e *View) URL() (URL, bool) {
	if !e.has {
		return URL{}, false
	}
	u := &e.url
	return URL{
		Href: u.HrefBytes(), Scheme: u.SchemeBytes(), Username: u.UsernameBytes(),
		Password: u.PasswordBytes(), Host: u.HostBytes(), Port: u.PortBytes(),
		Path: u.PathBytes(), Query: u.QueryBytes(), Fragment: u.FragmentBytes(),
	}, true
}
