package http

import (
	"errors"
	"testing"
)

func TestValidHost(t *testing.T) {
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{"example.com", true},
		{"example.com:8080", true},
		{"example.com:", true}, // port = *DIGIT (RFC 3986 §3.2.3)
		{"192.0.2.1:80", true},
		{"[::1]", true},
		{"[::1]:443", true},
		{"[v1.fe80::a+b]", true},
		{"xn--nxasmq6b.example", true},
		{"a%20b", true},
		{"", false},
		{":80", false},
		{"example.com:http", false},
		{"example.com:80:80", false},
		{"user@example.com", false},
		{"[::1", false},
		{"[]", false},
		{"[::1]x", false},
		{"[::1]:8a", false},
		{"exa mple", false},
		{"example.com/", false},
		{"[::1%eth0]", false},
	} {
		if got := ValidHost([]byte(tc.in)); got != tc.ok {
			t.Errorf("ValidHost(%q) = %v, want %v", tc.in, got, tc.ok)
		}
	}
}

func TestAbsoluteFormAuthority(t *testing.T) {
	for _, tc := range []struct {
		target string
		err    error
	}{
		{"http://example.com/a", nil},
		{"http://example.com:8080?q", nil},
		{"https://[::1]:443/", nil},
		{"urn:isbn:0451450523", nil}, // no authority to check
		{"foo:///path", nil},         // empty authority: not http(s)
		{"http://u:p@example.com/", ErrInvalidTarget},
		{"http://example.com:A/", ErrInvalidTarget},
		{"A://:A", ErrInvalidTarget},
		{"http:///path", ErrInvalidTarget},
		{"http:/path", ErrInvalidTarget},
		{"http://[::1/", ErrInvalidTarget},
	} {
		req := "GET " + tc.target + " HTTP/1.1\r\nHost: example.com\r\n\r\n"
		var r Request
		_, err := ParseRequest([]byte(req), &r)
		if !errors.Is(err, tc.err) && !(tc.err == nil && err == nil) {
			t.Errorf("target %q: err = %v, want %v", tc.target, err, tc.err)
		}
	}
}
