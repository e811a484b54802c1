package json

import (
	"bytes"
	"errors"

	"github.com/simdedge/simdedge/parse/url"
)

// Media is the kind of a request body, from its Content-Type.
type Media uint8

const (
	MediaOther       Media = iota // anything else, or no Content-Type
	MediaJSON                     // application/json and any type with the +json suffix (RFC 6839)
	MediaNDJSON                   // application/x-ndjson, application/ndjson, application/jsonl, application/x-jsonlines
	MediaFlatBuffers              // application/x-flatbuffers
	MediaForm                     // application/x-www-form-urlencoded
)

var mediaNames = [...]string{"other", "json", "ndjson", "flatbuffers", "form"}

func (m Media) String() string {
	if int(m) < len(mediaNames) {
		return mediaNames[m]
	}
	return "unknown"
}

// mediaTypes maps lower-case type/subtype to a Media.
var mediaTypes = map[string]Media{
	"application/json":                  MediaJSON,
	"application/x-ndjson":              MediaNDJSON,
	"application/ndjson":                MediaNDJSON,
	"application/jsonl":                 MediaNDJSON,
	"application/x-jsonlines":           MediaNDJSON,
	"application/x-flatbuffers":         MediaFlatBuffers,
	"application/x-www-form-urlencoded": MediaForm,
}

const jsonSuffix = "+json"

// maxMediaType bounds the type/subtype lowered on the stack; RFC 6838
// section 4.2 limits each of type and subtype to 127 characters.
const maxMediaType = 255

// MediaOf classifies a Content-Type field value (RFC 9110 section 8.3:
// type "/" subtype, case-insensitive, then parameters, which are ignored:
// JSON has no charset parameter, RFC 8259 section 11). It never allocates.
func MediaOf(contentType []byte) Media {
	mt := contentType
	if i := bytes.IndexByte(mt, ';'); i >= 0 {
		mt = mt[:i]
	}
	mt = bytes.Trim(mt, " \t")
	if len(mt) == 0 || len(mt) > maxMediaType {
		return MediaOther
	}
	var buf [maxMediaType]byte
	low := buf[:len(mt)]
	for i, c := range mt {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		low[i] = c
	}
	if m, ok := mediaTypes[string(low)]; ok {
		return m
	}
	if bytes.HasSuffix(low, []byte(jsonSuffix)) && bytes.HasPrefix(low, []byte("application/")) {
		return MediaJSON
	}
	return MediaOther
}

// Body is a request body decoded according to its media type. Only the
// field of its Media is set; Doc and Envelope are views into the body.
type Body struct {
	Media    Media
	Doc      *Document         // MediaJSON, MediaNDJSON (walk with Doc.Roots)
	Envelope Envelope          // MediaFlatBuffers
	Form     *url.SearchParams // MediaForm (decoded copies: it allocates)
}

// ErrUnsupportedMedia is returned by ParseBody for MediaOther.
var ErrUnsupportedMedia = errors.New("json: unsupported media type")

// ParseBody dispatches body on its Content-Type: JSON and NDJSON to p,
// FlatBuffers to the verifying envelope reader, forms to parse/url's
// SearchParams. For other types it returns the Media and ErrUnsupportedMedia,
// leaving the body to the caller.
func (p *Parser) ParseBody(contentType, body []byte) (Body, error) {
	m := MediaOf(contentType)
	out := Body{Media: m}
	var err error
	switch m {
	case MediaJSON:
		out.Doc, err = p.Parse(body)
	case MediaNDJSON:
		out.Doc, err = p.ParseND(body)
	case MediaFlatBuffers:
		out.Envelope, err = ReadEnvelope(body)
	case MediaForm:
		out.Form = url.ParseSearchParams(string(body))
	default:
		err = ErrUnsupportedMedia
	}
	return out, err
}
