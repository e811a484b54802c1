package json

import "bytes"

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
