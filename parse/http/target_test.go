package http

import (
	"errors"
	"testing"

	"github.com/simdedge/simdedge/parse/url"
)

func TestResolveTarget(t *testing.T) {
	cases := []struct {
		in, scheme string
		want       string
		err        error
	}{
		{"GET /a/../b?c=d HTTP/1.1\r\nHost: Example.COM:8080\r\n\r\n", "http", "http://example.com:8080/b?c=d", nil},
		{"GET /x HTTP/1.1\r\nHost: example.com:443\r\n\r\n", "https", "https://example.com/x", nil},
		{"GET http://other.example/p HTTP/1.1\r\nHost: example.com\r\n\r\n", "http", "http://other.example/p", nil},
		{"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n", "http", "http://example.com:443/", nil},
		{"OPTIONS * HTTP/1.1\r\nHost: example.com\r\n\r\n", "http", "http://example.com/", nil},
		{"GET /x HTTP/1.0\r\n\r\n", "http", "", ErrInvalidHost},
		{"GET /x HTTP/1.1\r\nHost:\r\n\r\n", "http", "", ErrInvalidHost},
		{"GET http://1.2.3.4.5/ HTTP/1.1\r\nHost: a\r\n\r\n", "http", "", url.ErrInvalidIPv4},
	}
	var u url.URL
	for _, c := range cases {
		var req Request
		if _, err := ParseRequest([]byte(c.in), &req); err != nil {
			t.Fatalf("%q: %v", c.in, err)
		}
		err := req.ResolveTarget(&u, c.scheme)
		if c.err != nil {
			if !errors.Is(err, c.err) {
				t.Errorf("%q: err = %v, want %v", c.in, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if u.Href() != c.want {
			t.Errorf("%q: %s, want %s", c.in, u.Href(), c.want)
		}
	}
}

func TestResolveTargetAllocs(t *testing.T) {
	var req Request
	if _, err := ParseRequest([]byte("GET /a/b?c=d HTTP/1.1\r\nHost: example.com\r\n\r\n"), &req); err != nil {
		t.Fatal(err)
	}
	var u url.URL
	_ = req.ResolveTarget(&u, "http")
	if a := testing.AllocsPerRun(100, func() {
		if err := req.ResolveTarget(&u, "http"); err != nil {
			t.Fatal(err)
		}
	}); a != 0 {
		t.Errorf("ResolveTarget allocates %v times", a)
	}
}

func TestClone(t *testing.T) {
	buf := []byte("POST /a HTTP/1.1\r\nHost: example.com\r\nConnection: upgrade\r\nUpgrade: ws\r\nContent-Length: 3\r\n\r\nabc")
	var req Request
	if _, err := ParseRequest(buf, &req); err != nil {
		t.Fatal(err)
	}
	want := snapshotRequest(0, nil, &req)
	c := req.Clone()
	for i := range buf {
		buf[i] = 'X' // the server recycles its buffer
	}
	if got := snapshotRequest(0, nil, c); !equalResults(got, want) || len(got.Headers) != len(want.Headers) {
		t.Fatalf("clone changed with the buffer:\n%+v\n%+v", got, want)
	}
	for i := range want.Headers {
		if snapshotRequest(0, nil, c).Headers[i] != want.Headers[i] {
			t.Fatalf("header %d: %q", i, snapshotRequest(0, nil, c).Headers[i])
		}
	}
}
