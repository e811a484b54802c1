package rls

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/simdedge/simdedge/server/rewrite"
)

func desc(kv ...string) Descriptor {
	var d Descriptor
	for i := 0; i+1 < len(kv); i += 2 {
		d = append(d, Entry{Key: kv[i], Value: rewrite.MustTemplate(kv[i+1])})
	}
	return d
}

func TestExpand(t *testing.T) {
	env := &rewrite.Env{ClientIP: []byte("192.0.2.7"), Host: []byte("api.example"), Path: []byte("/v1/x\xff"),
		Query: []byte("a=1"), HasQuery: true}
	ds := []Descriptor{
		desc("remote_address", "{client_ip}"),
		desc("host", "{host}", "path", "{path}"),
		desc("id", "{request_id}"), // empty: left out
		desc("uri", "{scheme}:{uri}"),
	}
	got := Expand(ds, env)
	want := [][]Value{
		{{"remote_address", "192.0.2.7"}},
		{{"host", "api.example"}, {"path", "/v1/x\uFFFD"}},
		{{"uri", ":/v1/x\uFFFD?a=1"}},
	}
	if len(got) != len(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	for i := range want {
		for j := range want[i] {
			if got[i][j] != want[i][j] {
				t.Errorf("descriptor %d entry %d: %q, want %q", i, j, got[i][j], want[i][j])
			}
		}
	}
	long := &rewrite.Env{Path: []byte("/" + strings.Repeat("a", 5000))}
	if v := Expand([]Descriptor{desc("p", "{path}")}, long)[0][0].Value; len(v) != MaxValueLen {
		t.Errorf("long value: %d bytes, want %d", len(v), MaxValueLen)
	}
}

func TestOptionsCheck(t *testing.T) {
	ok := Options{Domain: "d", Descriptors: []Descriptor{desc("k", "{host}")}}.withDefaults()
	if err := ok.check(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		o    Options
		want error
	}{
		{Options{Descriptors: ok.Descriptors, FailureMode: FailAllow}, ErrDomain},
		{Options{Domain: "d", FailureMode: FailAllow}, ErrDescriptors},
		{Options{Domain: "d", Descriptors: []Descriptor{{{Key: ""}}}, FailureMode: FailAllow}, ErrDescriptors},
		{Options{Domain: "d", Descriptors: ok.Descriptors, FailureMode: "maybe"}, ErrFailureMode},
	} {
		if err := tc.o.check(); err != tc.want {
			t.Errorf("%+v: %v, want %v", tc.o, err, tc.want)
		}
	}
}

// FuzzExpand: any template the parser accepts, expanded over any request
// values, gives bounded UTF-8 values with the configured keys and never
// an empty value.
func FuzzExpand(f *testing.F) {
	f.Add("{client_ip}", "/p", "h", []byte("192.0.2.1"))
	f.Add("{host}{uri}x", "/\xff\xfe", "a.b", []byte{})
	f.Add("{{literal}", "", "", []byte("\x00"))
	f.Fuzz(func(t *testing.T, tmpl, path, host string, ip []byte) {
		tp, err := rewrite.ParseTemplate(tmpl)
		if err != nil {
			return
		}
		env := &rewrite.Env{ClientIP: ip, Host: []byte(host), Path: []byte(path), Query: []byte(host), HasQuery: len(host)%2 == 1}
		for _, d := range Expand([]Descriptor{{{Key: "k", Value: tp}}}, env) {
			for _, v := range d {
				if v.Key != "k" || v.Value == "" || len(v.Value) > MaxValueLen || !utf8.ValidString(v.Value) {
					t.Fatalf("bad value %q for template %q", v.Value, tmpl)
				}
			}
		}
	})
}
