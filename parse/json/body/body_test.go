package body

import (
	"errors"
	"testing"

	"github.com/simdedge/simdedge/parse/json"
	"github.com/simdedge/simdedge/parse/json/envelope"
)

func TestParse(t *testing.T) {
	p := json.NewParser(json.Options{})
	b, err := Parse(p, []byte("application/json"), []byte(`{"a":[1,2]}`))
	if err != nil || b.Media != json.MediaJSON {
		t.Fatalf("json: %v %v", b.Media, err)
	}
	if v, err := b.Doc.Root().Get("a", 1); err != nil {
		t.Fatal(err)
	} else if n, _ := v.Int(); n != 2 {
		t.Fatalf("a[1] = %d", n)
	}

	b, err = Parse(p, []byte("application/x-ndjson"), []byte("1\n2\n"))
	if err != nil || b.Media != json.MediaNDJSON {
		t.Fatalf("ndjson: %v %v", b.Media, err)
	}

	env := envelope.NewBuilder(0).Build(&envelope.Parts{Method: []byte("PUT")})
	b, err = Parse(p, []byte("application/x-flatbuffers"), env)
	if err != nil || string(b.Envelope.Method()) != "PUT" {
		t.Fatalf("flatbuffers: %v", err)
	}
	if _, err := Parse(p, []byte("application/x-flatbuffers"), []byte("junk")); err == nil {
		t.Fatal("malformed flatbuffer accepted")
	}

	b, err = Parse(p, []byte("application/x-www-form-urlencoded"), []byte("a=1&b=x+y"))
	if err != nil || b.Form == nil {
		t.Fatalf("form: %v", err)
	}
	if v, ok := b.Form.Get("b"); !ok || v != "x y" {
		t.Fatalf("form b = %q", v)
	}

	b, err = Parse(p, []byte("text/plain"), []byte("hi"))
	if !errors.Is(err, ErrUnsupportedMedia) || b.Media != json.MediaOther {
		t.Fatalf("other: %v %v", b.Media, err)
	}
	if _, err := Parse(p, []byte("application/json"), []byte("{")); err == nil {
		t.Fatal("bad json accepted")
	}
}
