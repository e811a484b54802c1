package json

import "testing"

func TestMediaOf(t *testing.T) {
	cases := map[string]Media{
		"application/json":                         MediaJSON,
		"Application/JSON; charset=utf-8":          MediaJSON,
		" application/problem+json ":               MediaJSON,
		"application/vnd.api+json;v=1":             MediaJSON,
		"application/x-ndjson":                     MediaNDJSON,
		"application/jsonl":                        MediaNDJSON,
		"application/x-flatbuffers":                MediaFlatBuffers,
		"application/x-www-form-urlencoded; a=b":   MediaForm,
		"text/json":                                MediaOther,
		"text/plain":                               MediaOther,
		"":                                         MediaOther,
		"application/jsonx":                        MediaOther,
		"text/x+json":                              MediaOther,
		"application/" + string(make([]byte, 300)): MediaOther,
	}
	for in, want := range cases {
		if got := MediaOf([]byte(in)); got != want {
			t.Errorf("MediaOf(%q) = %v, want %v", in, got, want)
		}
	}
	ct := []byte("application/json; charset=utf-8")
	if n := testing.AllocsPerRun(100, func() { MediaOf(ct) }); n != 0 {
		t.Errorf("MediaOf allocates %v times", n)
	}
}
