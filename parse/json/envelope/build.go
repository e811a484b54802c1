package envelope

import (
	flatbuffers "github.com/google/flatbuffers/go"

	"github.com/simdedge/simdedge/parse/json/envelope/internal/envelopefb"
)

// Identifier is the FlatBuffers file identifier of the request
// envelope (schema/request.fbs), at bytes 4..8 of every envelope.
const Identifier = "SEDG"

var identifierBytes = []byte(Identifier)

// Header is one header as name and value bytes.
type Header struct {
	Name, Value []byte
}

// URL are the components of a parsed request URL (WHATWG URL
// Standard), each without its delimiter. Nil means absent.
type URL struct {
	Href, Scheme, Username, Password, Host, Port, Path, Query, Fragment []byte
}

// Parts is the plain input of Builder.Build: views of a parsed
// request (from parse/http and parse/url, or anything else). Nothing is
// retained after Build returns.
type Parts struct {
	Method  []byte
	Target  []byte
	Version uint8 // major*10 + minor
	Headers []Header
	Body    []byte
	URL     *URL // nil: no URL table
}

// Builder writes request envelopes into one reused buffer. After the
// buffer has grown to the largest envelope, Build allocates nothing. Not
// safe for concurrent use.
type Builder struct {
	b    *flatbuffers.Builder
	hdrs []flatbuffers.UOffsetT // header table offsets, reused
}

// defaultSize fits a typical browser request (the 703-byte test
// request makes an envelope of about 1,000 bytes) without growing.
const defaultSize = 2048

// bufAlign is the largest alignment in the schema (uoffsets, uint32).
const bufAlign = 8

// NewBuilder returns a builder with a buffer of initialSize bytes
// (0: a size that fits typical requests).
func NewBuilder(initialSize int) *Builder {
	if initialSize <= 0 {
		initialSize = defaultSize
	}
	// The builder aligns relative to the end of its buffer and grows it by
	// doubling; a multiple of the largest alignment keeps the finished
	// envelope aligned from its first byte, which the verifier checks.
	initialSize = (initialSize + bufAlign - 1) &^ (bufAlign - 1)
	return &Builder{b: flatbuffers.NewBuilder(initialSize)}
}

// Build writes the envelope of r and returns its bytes, a view into the
// builder's buffer valid until the next Build or Reset.
func (eb *Builder) Build(r *Parts) []byte {
	eb.Reset()
	for i := range r.Headers {
		eb.AddHeader(r.Headers[i].Name, r.Headers[i].Value)
	}
	return eb.Finish(r)
}

// Reset starts a new envelope (for the incremental form: Reset, AddHeader
// per field, Finish), which lets a server feed parse/http's header views
// without building a []Header.
func (eb *Builder) Reset() {
	eb.b.Reset()
	eb.hdrs = eb.hdrs[:0]
}

// AddHeader appends one header field to the envelope being built.
// FlatBuffers are built leaves first, so each header table is written now
// and only its offset is kept.
func (eb *Builder) AddHeader(name, value []byte) {
	b := eb.b
	n := b.CreateByteVector(name)
	v := b.CreateByteVector(value)
	envelopefb.HeaderStart(b)
	envelopefb.HeaderAddName(b, n)
	envelopefb.HeaderAddValue(b, v)
	eb.hdrs = append(eb.hdrs, envelopefb.HeaderEnd(b))
}

// Finish writes the rest of the envelope from r (whose Headers field is
// ignored: the headers are those added since Reset) and returns its bytes,
// valid until the next Build or Reset.
func (eb *Builder) Finish(r *Parts) []byte {
	b := eb.b
	var headers flatbuffers.UOffsetT
	if len(eb.hdrs) > 0 {
		b.StartVector(flatbuffers.SizeUOffsetT, len(eb.hdrs), flatbuffers.SizeUOffsetT)
		for i := len(eb.hdrs) - 1; i >= 0; i-- {
			b.PrependUOffsetT(eb.hdrs[i])
		}
		headers = b.EndVector(len(eb.hdrs))
	}
	var url flatbuffers.UOffsetT
	if u := r.URL; u != nil {
		url = eb.buildURL(u)
	}
	method := optVector(b, r.Method)
	target := optVector(b, r.Target)
	body := optVector(b, r.Body)
	envelopefb.RequestStart(b)
	addOpt(b, envelopefb.RequestAddMethod, method)
	addOpt(b, envelopefb.RequestAddTarget, target)
	envelopefb.RequestAddVersion(b, r.Version)
	addOpt(b, envelopefb.RequestAddHeaders, headers)
	addOpt(b, envelopefb.RequestAddBody, body)
	addOpt(b, envelopefb.RequestAddUrl, url)
	b.FinishWithFileIdentifier(envelopefb.RequestEnd(b), identifierBytes)
	return b.FinishedBytes()
}

func (eb *Builder) buildURL(u *URL) flatbuffers.UOffsetT {
	b := eb.b
	href := optVector(b, u.Href)
	scheme := optVector(b, u.Scheme)
	username := optVector(b, u.Username)
	password := optVector(b, u.Password)
	host := optVector(b, u.Host)
	port := optVector(b, u.Port)
	path := optVector(b, u.Path)
	query := optVector(b, u.Query)
	fragment := optVector(b, u.Fragment)
	envelopefb.URLStart(b)
	addOpt(b, envelopefb.URLAddHref, href)
	addOpt(b, envelopefb.URLAddScheme, scheme)
	addOpt(b, envelopefb.URLAddUsername, username)
	addOpt(b, envelopefb.URLAddPassword, password)
	addOpt(b, envelopefb.URLAddHost, host)
	addOpt(b, envelopefb.URLAddPort, port)
	addOpt(b, envelopefb.URLAddPath, path)
	addOpt(b, envelopefb.URLAddQuery, query)
	addOpt(b, envelopefb.URLAddFragment, fragment)
	return envelopefb.URLEnd(b)
}

// optVector writes v as a byte vector; nil stays absent (offset 0), while an
// empty non-nil slice is written as an empty vector.
func optVector(b *flatbuffers.Builder, v []byte) flatbuffers.UOffsetT {
	if v == nil {
		return 0
	}
	return b.CreateByteVector(v)
}

func addOpt(b *flatbuffers.Builder, add func(*flatbuffers.Builder, flatbuffers.UOffsetT), off flatbuffers.UOffsetT) {
	if off != 0 {
		add(b, off)
	}
}
