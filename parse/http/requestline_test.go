package http

import (
	"errors"
	"strings"
	"testing"
)

// TestCheckRequestLine: CheckRequestLine gives the error ParseRequest
// gives for the same method and target in a request line.
func TestCheckRequestLine(t *testing.T) {
	for _, tc := range []struct {
		method, target string
		want           error
	}{
		{"GET", "/", nil},
		{"GET", "/a?b=c", nil},
		{"OPTIONS", "*", nil},
		{"CONNECT", "a.example:443", nil},
		{"GET", "http://a.example/x", nil},
		{"", "/", ErrInvalidMethod},
		{"GET /admin/x", "/pub", ErrInvalidMethod},
		{"GE(T", "/", ErrInvalidMethod},
		{"GET", "", ErrInvalidTarget},
		{"GET", "/a b", ErrInvalidTarget},
		{"GET", "/a\tb", ErrInvalidTarget},
		{"GET", "/\x80", ErrInvalidTarget},
		{"GET", "/a#b", ErrTargetFragment},
		{"GET", "*", ErrInvalidTarget},
		{"CONNECT", "/", ErrInvalidTarget},
		{"CONNECT", "u@a.example:443", ErrInvalidTarget},
		{"GET", "http://u@a.example/", ErrInvalidTarget},
	} {
		err := CheckRequestLine([]byte(tc.method), []byte(tc.target))
		if !errors.Is(err, tc.want) && err != tc.want {
			t.Errorf("%q %q: %v, want %v", tc.method, tc.target, err, tc.want)
		}
		if tc.method == "" || tc.target == "" || strings.ContainsAny(tc.method+tc.target, " \t") {
			continue // the rendered line would split elsewhere
		}
		var req Request
		_, perr := ParseRequest([]byte(tc.method+" "+tc.target+" HTTP/1.1\r\nHost: a\r\n\r\n"), &req)
		if perr != err {
			t.Errorf("%q %q: ParseRequest says %v, CheckRequestLine %v", tc.method, tc.target, perr, err)
		}
	}
	m, tg := []byte("GET"), []byte("/a/b?c=d")
	if n := testing.AllocsPerRun(100, func() { CheckRequestLine(m, tg) }); n != 0 {
		t.Errorf("CheckRequestLine allocates %v times", n)
	}
}
