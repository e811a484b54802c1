package http

import (
	"bytes"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// fuzzSeeds adds the package's valid requests, the benchmark corpora and
// the llhttp corpus of the given kind ("request" or "response").
func fuzzSeeds(f *testing.F, kind string) {
	if kind == "request" {
		for _, s := range validRequests {
			f.Add([]byte(s))
		}
		f.Add(benchData(f, "req_kittyhell_703B.txt"))
		f.Add(benchData(f, "req_http_parser_post_chunked.txt"))
	}
	for _, c := range loadLLHTTPCorpus(f) {
		if !strings.HasPrefix(c.typ, kind) {
			continue
		}
		if kind == "response" {
			f.Add(c.input, c.skipBody)
		} else {
			f.Add(c.input)
		}
	}
}

// prefixLengths lists the proper prefix lengths of an n-byte head to
// check: all of them for short heads, else a spread plus the last bytes
// (where the line-end and empty-line cases are), so that one fuzz
// execution stays cheap enough for the fuzzer's minimisation.
func prefixLengths(n int) []int {
	const all = 128
	var ls []int
	step := 1
	if n > all {
		step = n / all
	}
	for i := 0; i < n; i += step {
		ls = append(ls, i)
	}
	for i := max(0, n-8); i < n; i++ {
		ls = append(ls, i)
	}
	return ls
}

// FuzzParseRequest checks, for any input: no panic; every walk (scalar,
// masks at each asm level) gives the same result; bytes after len(buf)
// are never read; a successful parse ends within buf, needs exactly
// buf[:n], and every shorter prefix returns ErrNeedMore.
func FuzzParseRequest(f *testing.F) {
	fuzzSeeds(f, "request")
	f.Fuzz(func(t *testing.T, data []byte) {
		data = data[:len(data):len(data)]
		got := parseReqAll(t, defaultParser, data)
		// Garbage in spare capacity must not change anything.
		padded := append(append(make([]byte, 0, len(data)+64), data...), bytes.Repeat([]byte{'\n'}, 64)...)
		if again := parseReqAll(t, defaultParser, padded[:len(data)]); !reflect.DeepEqual(got, again) {
			t.Fatalf("result depends on bytes past len: %+v vs %+v", got, again)
		}
		lenient := NewParser(Options{AllowBareLF: true})
		parseReqAll(t, lenient, data)
		if got.Err != nil {
			if got.N != 0 {
				t.Fatalf("error %v with n = %d", got.Err, got.N)
			}
			return
		}
		if got.N <= 0 || got.N > len(data) {
			t.Fatalf("n = %d of %d", got.N, len(data))
		}
		if exact := parseReqAll(t, defaultParser, data[:got.N]); !reflect.DeepEqual(got, exact) {
			t.Fatalf("head alone parses differently: %+v vs %+v", got, exact)
		}
		for _, i := range prefixLengths(got.N) {
			if p := parseReqAll(t, defaultParser, data[:i]); !errors.Is(p.Err, ErrNeedMore) {
				t.Fatalf("prefix %d of %d: %v", i, got.N, p.Err)
			}
		}
	})
}

// FuzzParseResponse is FuzzParseRequest for responses.
func FuzzParseResponse(f *testing.F) {
	fuzzSeeds(f, "response")
	f.Fuzz(func(t *testing.T, data []byte, head bool) {
		data = data[:len(data):len(data)]
		got := parseRespAll(t, defaultParser, data, head)
		if got.Err != nil {
			return
		}
		if got.N <= 0 || got.N > len(data) {
			t.Fatalf("n = %d of %d", got.N, len(data))
		}
		for _, i := range prefixLengths(got.N) {
			if p := parseRespAll(t, defaultParser, data[:i], head); !errors.Is(p.Err, ErrNeedMore) {
				t.Fatalf("prefix %d of %d: %v", i, got.N, p.Err)
			}
		}
	})
}

// FuzzChunked checks that the chunked decoder gives the same body, rest
// and error whether the input arrives at once or in pieces of any size,
// and never reports more body than it consumed.
func FuzzChunked(f *testing.F) {
	for _, s := range []string{
		"b\r\nhello world\r\n0\r\n\r\n",
		"5;a=\"b\\\"c\"\r\nhello\r\n0\r\nX: y\r\n\r\nNEXT",
		"10000000000000000\r\n",
		"5\r\nhelloX",
	} {
		f.Add([]byte(s), uint8(1))
	}
	f.Fuzz(func(t *testing.T, data []byte, step uint8) {
		var whole ChunkedDecoder
		buf := append([]byte(nil), data...)
		n, consumed, err := whole.Decode(buf)
		if n > consumed || consumed > len(data) {
			t.Fatalf("n %d consumed %d len %d", n, consumed, len(data))
		}
		// OnTrailer sees the same fields whole and split, each a token
		// name and a value without line ends or edge whitespace.
		var tr1, tr2 []string
		check := func(dst *[]string) func(name, value []byte) {
			return func(name, value []byte) {
				if len(name) == 0 || bytes.ContainsAny(name, ": \t\r\n") || bytes.ContainsAny(value, "\r\n") ||
					len(value) > 0 && (value[0] == ' ' || value[0] == '\t' || value[len(value)-1] == ' ' || value[len(value)-1] == '\t') {
					t.Fatalf("trailer %q: %q", name, value)
				}
				*dst = append(*dst, string(name)+"\x00"+string(value))
			}
		}
		a := ChunkedDecoder{OnTrailer: check(&tr1)}
		b := ChunkedDecoder{OnTrailer: check(&tr2)}
		body1, rest1, err1 := decodeAll(&a, string(data), 0)
		body2, rest2, err2 := decodeAll(&b, string(data), int(step)+1)
		if err1 == nil && !slices.Equal(tr1, tr2) {
			t.Fatalf("trailers whole %q, split %d %q", tr1, step, tr2)
		}
		if (err1 == nil) != (err == nil) {
			t.Fatalf("decodeAll and Decode disagree: %v vs %v", err1, err)
		}
		if body1 != body2 || rest1 != rest2 || !errors.Is(err2, err1) && !errors.Is(err1, err2) {
			t.Fatalf("split %d: %q %q %v vs whole %q %q %v", step, body2, rest2, err2, body1, rest1, err1)
		}
	})
}

// FuzzNetHTTP compares every request head we accept with net/http's
// ReadRequest (see diffNetHTTP for the intended divergences).
func FuzzNetHTTP(f *testing.F) {
	fuzzSeeds(f, "request")
	f.Fuzz(func(t *testing.T, data []byte) {
		// Room for every field, as on a reused connection, so that the
		// fast field walk takes the lines it can (walks at every
		// capacity agree: FuzzParseRequest).
		req := Request{Headers: make(Headers, 0, DefaultMaxHeaders)}
		n, err := ParseRequest(data, &req)
		if err != nil {
			return
		}
		head := bytes.TrimLeft(data[:n], "\r\n")
		if d := diffNetHTTP(head, &req, n); d != "" {
			t.Fatalf("%q: %s", head, d)
		}
	})
}
