package proxy

import (
	"bytes"
	"testing"

	phttp "github.com/simdedge/simdedge/parse/http"
)

// FuzzAppendTarget: for every request line the parser accepts and the
// proxy forwards, the forwarded target is origin form (or "*" for an
// OPTIONS on an empty path), the request line it makes parses again, and
// an absolute form's authority is what Host gets.
func FuzzAppendTarget(f *testing.F) {
	for _, s := range []string{
		"GET /x?q HTTP/1.1", "GET http://a.example/x?q#f HTTP/1.1", "OPTIONS http://a:81 HTTP/1.1",
		"GET HTTPS://A.example?x HTTP/1.1", "GET urn:x HTTP/1.1", "OPTIONS * HTTP/1.1", "CONNECT a:443 HTTP/1.1",
		"GET http://[::1]:8/p HTTP/1.1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		var head phttp.Request
		if _, err := phttp.ParseRequest([]byte(line+"\r\nHost: h\r\n\r\n"), &head); err != nil {
			return
		}
		if !forwardableTarget(&head) {
			return
		}
		out, authority := appendTarget(nil, &head)
		if len(out) == 0 || out[0] != '/' && !(string(out) == "*" && string(head.Method) == "OPTIONS") {
			t.Fatalf("%q forwarded as %q", line, out)
		}
		// (An origin-form target goes unchanged: a fragment in it is
		// the parser's to reject, RFC 9112 §3.2.)
		if authority != nil && bytes.IndexByte(out, '#') >= 0 {
			t.Fatalf("%q: fragment forwarded in %q", line, out)
		}
		host := []byte("h")
		if authority != nil {
			host = authority
		}
		again := append(append(append(append([]byte(nil), head.Method...), ' '), out...), " HTTP/1.1\r\nHost: "...)
		again = append(append(again, host...), "\r\n\r\n"...)
		var h2 phttp.Request
		if _, err := phttp.ParseRequest(again, &h2); err != nil {
			t.Fatalf("%q forwarded as %q: %v", line, again, err)
		}
	})
}
