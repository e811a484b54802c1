package http

import (
	"errors"
	"strings"
	"testing"
)

// A minimal valid HTTP/1.1 head prefix; cases append fields and the end.
const reqLine = "GET / HTTP/1.1\r\n"
const hostLine = "Host: example.com\r\n"

// TestRequestStrictness covers each rejection the package promises, with
// the sentinel and the status a server answers with.
func TestRequestStrictness(t *testing.T) {
	lenient := NewParser(Options{AllowBareLF: true})
	cases := []struct {
		name   string
		in     string
		p      *Parser
		want   error
		status int
	}{
		// Framing (RFC 9112 §6).
		{"te and cl", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n", nil, ErrContentLengthWithTE, 400},
		{"cl and te", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", nil, ErrContentLengthWithTE, 400},
		{"te chunked not final", reqLine + hostLine + "Transfer-Encoding: chunked, gzip\r\n\r\n", nil, ErrChunkedNotFinal, 400},
		{"te chunked not final across fields", reqLine + hostLine + "Transfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n\r\n", nil, ErrChunkedNotFinal, 400},
		{"te chunked twice", reqLine + hostLine + "Transfer-Encoding: chunked, chunked\r\n\r\n", nil, ErrChunkedNotFinal, 400},
		{"te without chunked", reqLine + hostLine + "Transfer-Encoding: gzip\r\n\r\n", nil, ErrChunkedNotFinal, 400},
		{"te unknown coding", reqLine + hostLine + "Transfer-Encoding: pigeons\r\n\r\n", nil, ErrUnknownTransferCoding, 501},
		{"te identity", reqLine + hostLine + "Transfer-Encoding: identity, chunked\r\n\r\n", nil, ErrUnknownTransferCoding, 501},
		{"te chunkedchunked", reqLine + hostLine + "Transfer-Encoding: chunkedchunked\r\n\r\n", nil, ErrUnknownTransferCoding, 501},
		{"te empty", reqLine + hostLine + "Transfer-Encoding: \r\n\r\n", nil, ErrInvalidTransferEncoding, 400},
		{"te chunked with parameter", reqLine + hostLine + "Transfer-Encoding: chunked;q=1\r\n\r\n", nil, ErrInvalidTransferEncoding, 400},
		{"te in http/1.0", "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", nil, ErrTransferEncodingInHTTP10, 400},
		{"cl plus sign", reqLine + hostLine + "Content-Length: +5\r\n\r\n", nil, ErrInvalidContentLength, 400},
		{"cl minus sign", reqLine + hostLine + "Content-Length: -5\r\n\r\n", nil, ErrInvalidContentLength, 400},
		{"cl non-digit", reqLine + hostLine + "Content-Length: 5a\r\n\r\n", nil, ErrInvalidContentLength, 400},
		{"cl hex", reqLine + hostLine + "Content-Length: 0x5\r\n\r\n", nil, ErrInvalidContentLength, 400},
		{"cl empty", reqLine + hostLine + "Content-Length: \r\n\r\n", nil, ErrInvalidContentLength, 400},
		{"cl inner space", reqLine + hostLine + "Content-Length: 1 2\r\n\r\n", nil, ErrInvalidContentLength, 400},
		{"cl overflow int64", reqLine + hostLine + "Content-Length: 9223372036854775808\r\n\r\n", nil, ErrInvalidContentLength, 400},
		{"cl overflow digits", reqLine + hostLine + "Content-Length: 1000000000000000000000\r\n\r\n", nil, ErrInvalidContentLength, 400},
		{"cl list differs", reqLine + hostLine + "Content-Length: 5, 6\r\n\r\n", nil, ErrConflictingContentLength, 400},
		{"cl fields differ", reqLine + hostLine + "Content-Length: 5\r\nContent-Length: 6\r\n\r\n", nil, ErrConflictingContentLength, 400},
		{"cl list empty element", reqLine + hostLine + "Content-Length: 5,,5\r\n\r\n", nil, ErrInvalidContentLength, 400},

		// Field lines (RFC 9112 §5).
		{"obs-fold", reqLine + hostLine + "X-A: b\r\n c\r\n\r\n", nil, ErrObsFold, 400},
		{"obs-fold tab", reqLine + hostLine + "X-A: b\r\n\tc\r\n\r\n", nil, ErrObsFold, 400},
		{"space after start line", reqLine + " Host: a\r\n\r\n", nil, ErrLeadingWhitespace, 400},
		{"space before colon", reqLine + "Host : a\r\n\r\n", nil, ErrSpaceBeforeColon, 400},
		{"tab before colon", reqLine + "Host\t: a\r\n\r\n", nil, ErrSpaceBeforeColon, 400},
		{"bare cr in value", reqLine + hostLine + "X-A: b\rc\r\n\r\n", nil, ErrBareCR, 400},
		{"bare cr in request line", "GET / HTTP/1.1\rHost: a\r\n\r\n", nil, ErrBareCR, 400},
		{"bare cr ending head", reqLine + hostLine + "\rX", nil, ErrBareCR, 400},
		{"bare lf in value", reqLine + hostLine + "X-A: b\nX-B: c\r\n\r\n", nil, ErrBareLF, 400},
		{"bare lf request line", "GET / HTTP/1.1\nHost: a\r\n\r\n", nil, ErrBareLF, 400},
		{"bare lf ending head", reqLine + hostLine + "\n", nil, ErrBareLF, 400},
		{"nul in value", reqLine + hostLine + "X-A: b\x00c\r\n\r\n", nil, ErrInvalidHeaderValue, 400},
		{"ctl in value", reqLine + hostLine + "X-A: b\x01c\r\n\r\n", nil, ErrInvalidHeaderValue, 400},
		{"del in value", reqLine + hostLine + "X-A: b\x7fc\r\n\r\n", nil, ErrInvalidHeaderValue, 400},
		{"ctl in name", reqLine + hostLine + "X\x01A: b\r\n\r\n", nil, ErrInvalidHeaderName, 400},
		{"nul in name", reqLine + hostLine + "X\x00A: b\r\n\r\n", nil, ErrInvalidHeaderName, 400},
		{"non-token name", reqLine + hostLine + "X(A): b\r\n\r\n", nil, ErrInvalidHeaderName, 400},
		{"non-ascii name", reqLine + hostLine + "X\xc3\xa9: b\r\n\r\n", nil, ErrInvalidHeaderName, 400},
		{"empty name", reqLine + hostLine + ": b\r\n\r\n", nil, ErrInvalidHeaderName, 400},
		{"no colon", reqLine + hostLine + "X-A\r\n\r\n", nil, ErrInvalidHeaderName, 400},

		// Request line (RFC 9112 §3).
		{"non-token method", "G(T / HTTP/1.1\r\n" + hostLine + "\r\n", nil, ErrInvalidMethod, 400},
		{"empty method", " / HTTP/1.1\r\n" + hostLine + "\r\n", nil, ErrInvalidMethod, 400},
		{"method tab", "GET\t/ HTTP/1.1\r\n" + hostLine + "\r\n", nil, ErrInvalidMethod, 400},
		{"double space", "GET  / HTTP/1.1\r\n" + hostLine + "\r\n", nil, ErrInvalidTarget, 400},
		{"space in target", "GET /a b HTTP/1.1\r\n" + hostLine + "\r\n", nil, ErrInvalidTarget, 400},
		{"non-ascii target", "GET /\xc3\xa9 HTTP/1.1\r\n" + hostLine + "\r\n", nil, ErrInvalidTarget, 400},
		{"target without slash or scheme", "GET foo HTTP/1.1\r\n" + hostLine + "\r\n", nil, ErrInvalidTarget, 400},
		{"target scheme with bad char", "GET ht_tp://a/ HTTP/1.1\r\n" + hostLine + "\r\n", nil, ErrInvalidTarget, 400},
		{"asterisk without options", "GET * HTTP/1.1\r\n" + hostLine + "\r\n", nil, ErrInvalidTarget, 400},
		{"connect with path", "CONNECT /a HTTP/1.1\r\n" + hostLine + "\r\n", nil, ErrInvalidTarget, 400},
		// RFC 9112 §3.2: no fragment in a request-target (issue 18).
		{"fragment", "GET /a#b HTTP/1.1\r\n" + hostLine + "\r\n", nil, ErrTargetFragment, 400},
		{"fragment after query", "GET /a?b=1#c HTTP/1.1\r\n" + hostLine + "\r\n", nil, ErrTargetFragment, 400},
		{"fragment past a word", "GET /abcdefghijklmnop#q HTTP/1.1\r\n" + hostLine + "\r\n", nil, ErrTargetFragment, 400},
		{"empty fragment", "GET /# HTTP/1.1\r\n" + hostLine + "\r\n", nil, ErrTargetFragment, 400},
		{"fragment in absolute form", "GET http://a.example/x#y HTTP/1.1\r\n" + hostLine + "\r\n", nil, ErrTargetFragment, 400},
		{"fragment in authority form", "CONNECT a.example#x:443 HTTP/1.1\r\n" + hostLine + "\r\n", nil, ErrTargetFragment, 400},
		{"no version", "GET /\r\n" + hostLine + "\r\n", nil, ErrInvalidRequestLine, 400},
		{"http/1.2", "GET / HTTP/1.2\r\n" + hostLine + "\r\n", nil, ErrUnsupportedVersion, 505},
		{"http/2.0", "GET / HTTP/2.0\r\n" + hostLine + "\r\n", nil, ErrUnsupportedVersion, 505},
		{"http/0.9", "GET / HTTP/0.9\r\n" + hostLine + "\r\n", nil, ErrUnsupportedVersion, 505},
		{"lower-case version", "GET / http/1.1\r\n" + hostLine + "\r\n", nil, ErrInvalidVersion, 400},
		{"short version", "GET / HTTP/1\r\n" + hostLine + "\r\n", nil, ErrInvalidVersion, 400},
		{"two-digit version", "GET / HTTP/11.1\r\n" + hostLine + "\r\n", nil, ErrInvalidVersion, 400},

		// Host (RFC 9112 §3.2).
		{"missing host", reqLine + "\r\n", nil, ErrMissingHost, 400},
		{"two hosts", reqLine + hostLine + hostLine + "\r\n", nil, ErrMultipleHost, 400},
		{"host with path", reqLine + "Host: a.example/x\r\n\r\n", nil, ErrInvalidHost, 400},
		{"host with userinfo", reqLine + "Host: u@a.example\r\n\r\n", nil, ErrInvalidHost, 400},
		{"host with space", reqLine + "Host: a b\r\n\r\n", nil, ErrInvalidHost, 400},
		{"two hosts http/1.0", "GET / HTTP/1.0\r\n" + hostLine + hostLine + "\r\n", nil, ErrMultipleHost, 400},

		// Expect (RFC 9110 §10.1.1): only 100-continue is known.
		{"expect unknown", "PUT /x HTTP/1.1\r\nHost: a\r\nExpect: pigeons\r\nContent-Length: 1\r\n\r\n", nil, ErrUnknownExpectation, 417},
		{"expect 100-continue with a value", reqLine + hostLine + "Expect: 100-continue=1\r\n\r\n", nil, ErrUnknownExpectation, 417},
		{"expect list with unknown", reqLine + hostLine + "Expect: 100-continue, pigeons\r\n\r\n", nil, ErrUnknownExpectation, 417},
		{"expect second field unknown", reqLine + hostLine + "Expect: 100-continue\r\nExpect: x\r\n\r\n", nil, ErrUnknownExpectation, 417},
		{"expect unknown http/1.0", "GET / HTTP/1.0\r\nExpect: 200-ok\r\n\r\n", nil, ErrUnknownExpectation, 417},

		// Limits.
		{"request line too long", "GET /" + strings.Repeat("a", DefaultMaxRequestLine) + " HTTP/1.1\r\n" + hostLine + "\r\n", nil, ErrRequestLineTooLong, 414},
		{"request line too long incomplete", "GET /" + strings.Repeat("a", DefaultMaxRequestLine), nil, ErrRequestLineTooLong, 414},
		{"method too long incomplete", strings.Repeat("G", DefaultMaxRequestLine), nil, ErrRequestLineTooLong, 414},
		{"header block too large", reqLine + hostLine + "X-A: " + strings.Repeat("a", DefaultMaxHeaderBytes) + "\r\n\r\n", nil, ErrHeaderTooLarge, 431},
		{"header block too large incomplete", reqLine + hostLine + "X-A: " + strings.Repeat("a", DefaultMaxHeaderBytes), nil, ErrHeaderTooLarge, 431},
		{"too many headers", reqLine + hostLine + strings.Repeat("X-A: b\r\n", DefaultMaxHeaders) + "\r\n", nil, ErrTooManyHeaders, 431},
		{"custom line limit", "GET /" + strings.Repeat("a", 100) + " HTTP/1.1\r\n" + hostLine + "\r\n", NewParser(Options{MaxRequestLine: 64}), ErrRequestLineTooLong, 414},
		{"custom header limit", reqLine + hostLine + "X-A: b\r\nX-B: c\r\n\r\n", NewParser(Options{MaxHeaders: 2}), ErrTooManyHeaders, 431},
		{"custom head limit", reqLine + hostLine + "X-A: " + strings.Repeat("b", 100) + "\r\n\r\n", NewParser(Options{MaxHeaderBytes: 100}), ErrHeaderTooLarge, 431},

		// Lenient bare LF where enabled; the other rules still hold.
		{"lenient bare lf", "GET / HTTP/1.1\nHost: a\nX-A: b\n\n", lenient, nil, 0},
		{"lenient bare lf still rejects bare cr", "GET / HTTP/1.1\nHost: a\rX\n\n", lenient, ErrBareCR, 400},
		{"lenient bare lf still rejects obs-fold", "GET / HTTP/1.1\nHost: a\n b\n\n", lenient, ErrObsFold, 400},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := c.p
			if p == nil {
				p = defaultParser
			}
			got := parseReqAll(t, p, []byte(c.in))
			if !errors.Is(got.Err, c.want) || (c.want == nil) != (got.Err == nil) {
				t.Fatalf("err = %v, want %v", got.Err, c.want)
			}
			if s := StatusFor(got.Err); s != c.status {
				t.Errorf("StatusFor = %d, want %d", s, c.status)
			}
			if got.Err != nil {
				assertNoInput(t, got.Err, c.in)
			}
		})
	}
}

// assertNoInput checks that an error carries none of the input: it must be
// one of the package's sentinels itself (fixed texts), not a wrapper that
// could add detail.
func assertNoInput(t *testing.T, err error, in string) {
	t.Helper()
	for _, s := range allSentinels {
		if err == s {
			if !strings.HasPrefix(err.Error(), "http: ") {
				t.Errorf("error %q lacks the package prefix", err)
			}
			return
		}
	}
	t.Errorf("error %q is not a sentinel", err)
}

// TestRequestAccepts checks what the strict parser must still accept and
// the framing it derives.
func TestRequestAccepts(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want reqResult
	}{
		{"minimal", reqLine + hostLine + "\r\n", reqResult{Method: "GET", Target: "/", Version: HTTP11, Host: "example.com", ContentLength: -1}},
		{"leading crlf", "\r\n\r\n" + reqLine + hostLine + "\r\n", reqResult{Method: "GET", Target: "/", Version: HTTP11, Host: "example.com", ContentLength: -1}},
		{"http/1.0 no host closes", "GET / HTTP/1.0\r\n\r\n", reqResult{Method: "GET", Target: "/", Version: HTTP10, ContentLength: -1, Close: true}},
		{"http/1.0 keep-alive", "GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", reqResult{Method: "GET", Target: "/", Version: HTTP10, ContentLength: -1}},
		{"close", reqLine + hostLine + "Connection: foo, close\r\n\r\n", reqResult{Method: "GET", Target: "/", Version: HTTP11, Host: "example.com", ContentLength: -1, Close: true}},
		{"content-length", "POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 003\r\n\r\n", reqResult{Method: "POST", Target: "/x", Version: HTTP11, Host: "a", Body: BodyLength, ContentLength: 3}},
		{"content-length zero", "POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n", reqResult{Method: "POST", Target: "/x", Version: HTTP11, Host: "a", Body: BodyNone, ContentLength: 0}},
		{"content-length same list", "POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 7, 7\r\nContent-Length: 7\r\n\r\n", reqResult{Method: "POST", Target: "/x", Version: HTTP11, Host: "a", Body: BodyLength, ContentLength: 7}},
		{"content-length max", "POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 9223372036854775807\r\n\r\n", reqResult{Method: "POST", Target: "/x", Version: HTTP11, Host: "a", Body: BodyLength, ContentLength: 9223372036854775807}},
		{"chunked", "POST /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, Chunked\r\n\r\n", reqResult{Method: "POST", Target: "/x", Version: HTTP11, Host: "a", Body: BodyChunked, ContentLength: -1}},
		{"chunked two fields", "POST /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n", reqResult{Method: "POST", Target: "/x", Version: HTTP11, Host: "a", Body: BodyChunked, ContentLength: -1}},
		{"expect", "PUT /x HTTP/1.1\r\nHost: a\r\nExpect: 100-Continue\r\nContent-Length: 1\r\n\r\n", reqResult{Method: "PUT", Target: "/x", Version: HTTP11, Host: "a", Body: BodyLength, ContentLength: 1, Expect100: true}},
		{"expect list", "PUT /x HTTP/1.1\r\nHost: a\r\nExpect: 100-continue ,100-CONTINUE\r\nContent-Length: 1\r\n\r\n", reqResult{Method: "PUT", Target: "/x", Version: HTTP11, Host: "a", Body: BodyLength, ContentLength: 1, Expect100: true}},
		{"expect empty", reqLine + hostLine + "Expect:\r\n\r\n", reqResult{Method: "GET", Target: "/", Version: HTTP11, Host: "example.com", ContentLength: -1}},
		{"expect ignored in http/1.0", "PUT /x HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\n", reqResult{Method: "PUT", Target: "/x", Version: HTTP10, Body: BodyLength, ContentLength: 1, Close: true}},
		{"upgrade", "GET /ws HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n", reqResult{Method: "GET", Target: "/ws", Version: HTTP11, Host: "a", ContentLength: -1, Upgrade: "websocket"}},
		{"upgrade without connection", "GET /ws HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\n\r\n", reqResult{Method: "GET", Target: "/ws", Version: HTTP11, Host: "a", ContentLength: -1}},
		{"ows trimmed, tab and obs-text kept", reqLine + "Host:\t a \t\r\nX-A: b\tc\xff \r\n\r\n", reqResult{Method: "GET", Target: "/", Version: HTTP11, Host: "a", ContentLength: -1}},
		{"empty host", reqLine + "Host:\r\n\r\n", reqResult{Method: "GET", Target: "/", Version: HTTP11, ContentLength: -1}},
		{"empty value", reqLine + hostLine + "X-A:\r\n\r\n", reqResult{Method: "GET", Target: "/", Version: HTTP11, Host: "example.com", ContentLength: -1}},
		{"absolute form", "GET http://a.example/x?y=1 HTTP/1.1\r\nHost: a.example\r\n\r\n", reqResult{Method: "GET", Target: "http://a.example/x?y=1", Version: HTTP11, Host: "a.example", ContentLength: -1}},
		{"authority form", "CONNECT a.example:443 HTTP/1.1\r\nHost: a.example:443\r\n\r\n", reqResult{Method: "CONNECT", Target: "a.example:443", Version: HTTP11, Host: "a.example:443", ContentLength: -1}},
		{"asterisk form", "OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n", reqResult{Method: "OPTIONS", Target: "*", Version: HTTP11, Host: "a", ContentLength: -1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := c.in + "BODY"
			got := parseReqAll(t, defaultParser, []byte(in))
			if got.Err != nil {
				t.Fatalf("err = %v", got.Err)
			}
			if got.N != len(c.in) {
				t.Errorf("n = %d, want %d", got.N, len(c.in))
			}
			got.N, got.Headers = 0, nil
			if !equalResults(got, c.want) {
				t.Errorf("got  %+v\nwant %+v", got, c.want)
			}
		})
	}
}

func equalResults(a, b reqResult) bool {
	a.Headers, b.Headers = nil, nil
	return a.Method == b.Method && a.Target == b.Target && a.Version == b.Version &&
		a.Host == b.Host && a.Body == b.Body && a.ContentLength == b.ContentLength &&
		a.Close == b.Close && a.Expect100 == b.Expect100 && a.Upgrade == b.Upgrade
}
