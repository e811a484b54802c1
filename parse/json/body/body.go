// Package body decodes a request body by its Content-Type: JSON and NDJSON
// with parse/json, FlatBuffers envelopes with parse/json/envelope (verified
// before any access), HTML forms with parse/url's SearchParams.
//
// It is a package of its own so that users of parse/json alone do not
// depend on the FlatBuffers runtime or on parse/url.
package body

import (
	"errors"

	"github.com/simdedge/simdedge/parse/json"
	"github.com/simdedge/simdedge/parse/json/envelope"
	"github.com/simdedge/simdedge/parse/url"
)

// Body is a request body decoded according to its media type. Only the
// field of its Media is set; Doc and Envelope are views into the body.
type Body struct {
	Media    json.Media
	Doc      *json.Document    // json.MediaJSON, MediaNDJSON (walk with Doc.Roots)
	Envelope envelope.View     // json.MediaFlatBuffers
	Form     *url.SearchParams // json.MediaForm (decoded copies: it allocates)
}

// ErrUnsupportedMedia is returned by Parse for json.MediaOther.
var ErrUnsupportedMedia = errors.New("body: unsupported media type")

// Parse dispatches body on its Content-Type: JSON and NDJSON to p,
// FlatBuffers to the verifying envelope reader, forms to parse/url's
// SearchParams. For other types it returns the Media and ErrUnsupportedMedia,
// leaving the body to the caller.
func Parse(p *json.Parser, contentType, body []byte) (Body, error) {
	m := json.MediaOf(contentType)
	out := Body{Media: m}
	var err error
	switch m {
	case json.MediaJSON:
		out.Doc, err = p.Parse(body)
	case json.MediaNDJSON:
		out.Doc, err = p.ParseND(body)
	case json.MediaFlatBuffers:
		out.Envelope, err = envelope.Read(body)
	case json.MediaForm:
		out.Form = url.ParseSearchParams(string(body))
	default:
		err = ErrUnsupportedMedia
	}
	return out, err
}
