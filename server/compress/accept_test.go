package compress

import (
	"testing"
)

func TestChoose(t *testing.T) {
	p, err := New(Options{Encodings: []string{"zstd", "br", "gzip"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ ae, want string }{
		{"", ""},
		{"gzip", "gzip"},
		{"gzip, deflate, br, zstd", "zstd"},
		{"gzip;q=1.0, br;q=0.999", "gzip"},
		{"gzip;q=0.5, br;q=0.5", "br"},
		{"br;q=0, gzip;q=0.1", "gzip"},
		{"*", "zstd"},
		{"*;q=0", ""},
		{"*;q=0.1, gzip;q=0.2", "gzip"},
		{"zstd;q=0, *", "br"},
		{"identity", ""},
		{"identity;q=0", ""},
		{" gzip ; q=0.7 , zstd ; q=0.6 ", "gzip"},
		{"gzip;q=1.001", ""},
		{"gzip;q=0.1234", ""},
		{"gzip;q=", ""},
		{"gzip;level=1", "gzip"},
		{"gzip;level=1;q=0", ""},
		{"gzip;q=0, gzip", ""}, // the first mention counts
		{",,,gzip,,", "gzip"},
		{"X-GZIP", "gzip"},
	} {
		enc := p.Encoder([]byte(tc.ae))
		got := ""
		if enc != nil {
			got = enc.Coding()
			enc.Release()
		}
		if got != tc.want {
			t.Errorf("%q: %q, want %q", tc.ae, got, tc.want)
		}
	}
}

func TestCompressible(t *testing.T) {
	p, err := New(Options{Types: []string{"application/json", "text/*"}})
	if err != nil {
		t.Fatal(err)
	}
	for ct, want := range map[string]bool{
		"application/json":                true,
		"Application/JSON; charset=utf-8": true,
		"text/html":                       true,
		"text/":                           false,
		"text":                            false,
		"application/jsonx":               false,
		"image/png":                       false,
		"":                                false,
	} {
		if got := p.Compressible([]byte(ct)); got != want {
			t.Errorf("%q: %v", ct, got)
		}
	}
}

func TestNewErrors(t *testing.T) {
	for _, o := range []Options{
		{Encodings: []string{"deflate"}},
		{Encodings: []string{"gzip", "gzip"}},
		{Levels: map[string]int{"gzip": 10}},
		{Levels: map[string]int{"zstd": 0}},
		{Levels: map[string]int{"lz4": 1}},
		{MinLength: 1 << 20},
		{MinLength: -1},
		{Types: []string{"json"}},
		{Types: []string{"*/json"}},
		{Types: []string{"text/*; q=1"}},
	} {
		if _, err := New(o); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
	p, err := New(Options{})
	if err != nil || p.MinLength() != DefaultMinLength || len(p.Codings()) != 2 {
		t.Errorf("defaults: %v %v", p, err)
	}
}

// FuzzAcceptEncoding: any field value gives a configured coding or none,
// never a panic, and never one the field gives q=0 explicitly and alone.
func FuzzAcceptEncoding(f *testing.F) {
	for _, s := range []string{"gzip", "br;q=0.5, *", "zstd;q=0", "*;q=0.001", ";;,;q=1", "gzip;q=1.000"} {
		f.Add(s)
	}
	p, err := New(Options{Encodings: []string{"zstd", "br", "gzip"}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, ae string) {
		i := choose([]byte(ae), p.codings)
		if i < -1 || i >= len(p.codings) {
			t.Fatalf("%q: index %d", ae, i)
		}
		if i >= 0 && ae == p.codings[i].name+";q=0" {
			t.Fatalf("%q: chose the refused coding", ae)
		}
	})
}
