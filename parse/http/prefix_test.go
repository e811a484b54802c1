package http

import (
	"errors"
	"testing"
)

// validRequests are complete heads (with a body byte after some) used by
// the prefix, allocation and fuzz tests.
var validRequests = []string{
	"GET / HTTP/1.1\r\nHost: example.com\r\n\r\n",
	"\r\nGET /a?b=c HTTP/1.1\r\nHost: example.com\r\nUser-Agent: curl/8.5.0\r\nAccept: */*\r\n\r\n",
	"POST /joyent/http-parser HTTP/1.1\r\nHost: github.com\r\nDNT: 1\r\nTransfer-Encoding: chunked\r\n\r\nb\r\nhello world\r\n0\r\n\r\n",
	"PUT /u HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nExpect: 100-continue\r\nX-Empty:\r\nX-Tab: a\tb\r\n\r\nabc",
	"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
	"OPTIONS * HTTP/1.1\r\nHost: a\r\nX-Obs-Text: \x80\xff\r\n\r\n",
}

// TestPrefixNeedsMore checks the incremental contract: every proper prefix
// of a valid head yields ErrNeedMore (never a different error, never a
// premature success), and the whole head parses to the same length with
// any suffix.
func TestPrefixNeedsMore(t *testing.T) {
	for _, in := range append(validRequests, string(benchData(t, "req_kittyhell_703B.txt"))) {
		full := parseReqAll(t, defaultParser, []byte(in))
		if full.Err != nil {
			t.Fatalf("%q: %v", in, full.Err)
		}
		for i := 0; i < full.N; i++ {
			got := parseReqAll(t, defaultParser, []byte(in[:i]))
			if !errors.Is(got.Err, ErrNeedMore) {
				t.Fatalf("prefix %q: err = %v, want ErrNeedMore", in[:i], got.Err)
			}
		}
	}
}

// TestAllocs asserts that parsing into a reused Request or Response does
// not allocate, on every walk.
func TestAllocs(t *testing.T) {
	kitty := benchData(t, "req_kittyhell_703B.txt")
	resp := []byte("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: keep-alive\r\nX-A: b\r\n\r\nhello")
	for _, c := range walkConfigs() {
		withWalk(c, func() {
			var req Request
			var r Response
			_, _ = ParseRequest(kitty, &req) // grow Headers once
			_, _ = ParseResponse(resp, &r)
			if a := testing.AllocsPerRun(100, func() {
				if _, err := ParseRequest(kitty, &req); err != nil {
					t.Fatal(err)
				}
			}); a != 0 {
				t.Errorf("%v: ParseRequest allocates %v times", c, a)
			}
			if a := testing.AllocsPerRun(100, func() {
				if _, err := ParseResponse(resp, &r); err != nil {
					t.Fatal(err)
				}
			}); a != 0 {
				t.Errorf("%v: ParseResponse allocates %v times", c, a)
			}
			bad := []byte("GET / HTTP/1.1\r\nHost: a\r\nX\x00: b\r\n\r\n")
			if a := testing.AllocsPerRun(100, func() { _, _ = ParseRequest(bad, &req) }); a != 0 {
				t.Errorf("%v: a failing ParseRequest allocates %v times", c, a)
			}
			var d ChunkedDecoder
			body := []byte("5;a=b\r\nhello\r\n0\r\nX: y\r\n\r\n")
			buf := make([]byte, len(body))
			if a := testing.AllocsPerRun(100, func() {
				copy(buf, body)
				d.Reset()
				if _, _, err := d.Decode(buf); err != nil {
					t.Fatal(err)
				}
			}); a != 0 {
				t.Errorf("ChunkedDecoder allocates %v times", a)
			}
		})
	}
}

// TestHeaderLookup checks the lookup helpers, and that they do not
// allocate.
func TestHeaderLookup(t *testing.T) {
	var req Request
	if _, err := ParseRequest([]byte("GET / HTTP/1.1\r\nHost: a\r\nX-Dup: 1\r\nx-dup: 2\r\nAccept: */*\r\n\r\n"), &req); err != nil {
		t.Fatal(err)
	}
	if v, ok := req.Headers.Get("X-DUP"); !ok || string(v) != "1" {
		t.Errorf("Get = %q, %v", v, ok)
	}
	if _, ok := req.Headers.Get("X-Du"); ok {
		t.Error("Get matched a prefix")
	}
	if n := req.Headers.Count("x-Dup"); n != 2 {
		t.Errorf("Count = %d", n)
	}
	if i := req.Headers.Index("x-dup", 2); i != 2 {
		t.Errorf("Index = %d", i)
	}
	if !EqualFold([]byte("Content-Length"), "content-LENGTH") || EqualFold([]byte("a"), "b") {
		t.Error("EqualFold")
	}
	if a := testing.AllocsPerRun(100, func() {
		_, _ = req.Headers.Get("accept")
		_ = req.Headers.Count("x-dup")
	}); a != 0 {
		t.Errorf("lookup allocates %v times", a)
	}
}
