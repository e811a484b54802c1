package http

import (
	"bufio"
	"bytes"
	"errors"
	nethttp "net/http"
	"net/textproto"
	"slices"
	"strings"
	"testing"
)

// diffNetHTTP compares our parse of a request head that we accept with
// net/http's ReadRequest. It returns "" when they agree (or the input is
// one of the documented divergences), else what differs.
//
// Intended divergences, where net/http is more lenient or does more:
//   - net/http accepts what we reject (bare LF, obs-fold, CL with TE,
//     HTTP/1.x versions above 1.1, ...): only inputs we accept are
//     compared, and the strictness tests cover the rest.
//   - net/http parses the target with net/url and rejects targets it
//     cannot decode (e.g. "/%zz"); we return the target as received and
//     leave it to parse/url. Such inputs are skipped (netHTTPRejectsTarget).
//   - net/http accepts a Content-Length list ("5, 5") only as repeated
//     fields; RFC 9110 §8.6 allows both forms, and we accept both.
//     Repeated equal fields are collapsed into one by net/http; we keep
//     them as received, so only the first is compared.
//   - net/http moves Host and Transfer-Encoding out of the header map;
//     we keep them in Headers (and report Host in Request.Host too).
//   - net/http's ReadRequest does not skip empty lines before the request
//     line (RFC 9112 §2.2 says a server SHOULD); they are cut off before
//     net/http sees the input.
//   - net/http accepts Transfer-Encoding only as exactly "chunked"; RFC
//     9110 §5.6.1 makes recipients ignore empty list elements and §7.8
//     makes codings case-insensitive, so "Chunked," is chunked to us.
//   - a "#" in the target: RFC 9112's target grammar has no fragment, so
//     we reject it (ErrTargetFragment, 400); net/http keeps it in the
//     path, and llhttp's corpus accepts one ("fragment in URI"). Only
//     inputs we accept are compared, so this shows in the strictness
//     tests and the llhttp divergences.
//   - an Expect member other than 100-continue: we reject the request
//     (ErrUnknownExpectation, 417, RFC 9110 §10.1.1); net/http's
//     ReadRequest accepts it and its server answers 417.
//   - with an absolute-form target, net/http's Request.Host is the
//     target's authority (RFC 9112 §3.2.2); ours is the Host field's
//     value, and ResolveTarget applies the rule. The authority is compared.
//   - net/http's ReadRequest does not check Host (its server does);
//     net/textproto accepts a space inside a field name ("X A: b").
//   - net/http canonicalises field names and groups fields by name; we
//     keep names as received, in order. Compared after canonicalising,
//     value order within a name must match.
func diffNetHTTP(in []byte, r *Request, n int) string {
	nr, err := nethttp.ReadRequest(bufio.NewReader(bytes.NewReader(in)))
	if err != nil {
		if strings.Contains(string(r.Target), "%") || string(r.Method) == "CONNECT" {
			return "" // net/url rejects what it cannot decode; see above.
		}
		if r.Body == BodyChunked && strings.Contains(err.Error(), "unsupported transfer encoding") {
			return "" // "chunked," and other list forms; see above.
		}
		for _, h := range r.Headers {
			if EqualFold(h.Name, "Content-Length") && bytes.IndexByte(h.Value, ',') >= 0 {
				return "" // list form; see above.
			}
		}
		return "net/http rejects: " + err.Error()
	}
	if nr.Method != string(r.Method) {
		return "method " + nr.Method
	}
	if nr.RequestURI != string(r.Target) {
		return "target " + nr.RequestURI
	}
	if nr.ProtoMajor != 1 || nr.ProtoMinor != int(r.Version)-10 {
		return "version " + nr.Proto
	}
	// Fields: group ours like net/http does.
	ours := map[string][]string{}
	for _, h := range r.Headers {
		k := textproto.CanonicalMIMEHeaderKey(string(h.Name))
		if k == "Host" || k == "Transfer-Encoding" {
			continue
		}
		if k == "Content-Length" && len(ours[k]) > 0 {
			// net/http collapses repeated Content-Length fields (which
			// framing already checked are equal) into one; see above.
			continue
		}
		ours[k] = append(ours[k], string(h.Value))
	}
	if len(ours) != len(nr.Header) {
		return "field names differ"
	}
	for k, v := range ours {
		if !slices.Equal(v, nr.Header[k]) {
			return "field " + k + " differs"
		}
	}
	if auth := absoluteAuthority(r.Target); r.TargetForm() == AbsoluteForm && auth != "" {
		// RFC 9112 §3.2.2: with an absolute-form target the target's
		// authority wins over Host. net/http puts that authority in
		// Request.Host; ours keeps the field's value in Host, and
		// ResolveTarget and server/router apply the rule. Compare the
		// authority instead (a target without one, "a:b", leaves Host).
		if nr.Host != auth {
			return "absolute-form host " + nr.Host
		}
	} else if r.Host != nil && nr.Host != string(r.Host) {
		return "host " + nr.Host
	}
	// Framing.
	switch r.Body {
	case BodyChunked:
		if !slices.Equal(nr.TransferEncoding, []string{"chunked"}) || nr.ContentLength != -1 {
			return "net/http does not see a chunked body"
		}
	case BodyLength:
		if nr.ContentLength != r.ContentLength {
			return "content-length differs"
		}
	case BodyNone:
		if nr.ContentLength != 0 {
			return "net/http sees a body"
		}
	}
	if nr.Close != r.Close {
		return "close differs"
	}
	// Expect is a list (RFC 9110 §10.1.1): repeated fields combine, so any
	// element "100-continue" counts, where net/http's Header.Get reads
	// only the first field.
	wantExpect := false
	for _, v := range nr.Header["Expect"] {
		for _, e := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(e), "100-continue") {
				wantExpect = true
			}
		}
	}
	wantExpect = wantExpect && r.Version == HTTP11
	if wantExpect != r.Expect100 {
		return "expect differs"
	}
	return ""
}

// absoluteAuthority returns the host[:port] of an absolute-form target:
// what follows "scheme://" up to the path, query or fragment, without user
// information (as net/url reports it).
func absoluteAuthority(target []byte) string {
	// The authority is present only when "//" directly follows the
	// scheme's colon (RFC 3986 §3): "a:://b" has none.
	t := string(target)
	i := strings.IndexByte(t, ':')
	if i < 0 || !strings.HasPrefix(t[i+1:], "//") {
		return ""
	}
	t = t[i+3:]
	if j := strings.IndexAny(t, "/?#"); j >= 0 {
		t = t[:j]
	}
	if j := strings.LastIndexByte(t, '@'); j >= 0 {
		t = t[j+1:]
	}
	return t
}

// netHTTPInputs are the requests compared with net/http: the package's
// own valid requests, the benchmark corpora, and every request of the
// llhttp corpus that we accept.
func netHTTPInputs(t *testing.T) [][]byte {
	var ins [][]byte
	for _, s := range validRequests {
		ins = append(ins, []byte(s))
	}
	ins = append(ins, benchData(t, "req_kittyhell_703B.txt"), benchData(t, "req_http_parser_post_chunked.txt"))
	for _, c := range loadLLHTTP(t) {
		if strings.HasPrefix(c.typ, "request") {
			ins = append(ins, c.input)
		}
	}
	return ins
}

func TestNetHTTPDifferential(t *testing.T) {
	compared := 0
	for _, in := range netHTTPInputs(t) {
		// Room for every field, so that the fast field walk runs.
		req := Request{Headers: make(Headers, 0, DefaultMaxHeaders)}
		n, err := ParseRequest(in, &req)
		if err != nil {
			continue
		}
		// net/http reads one message; hand it only the head, without
		// the empty lines we skip.
		head := bytes.TrimLeft(in[:n], "\r\n")
		if d := diffNetHTTP(head, &req, n); d != "" {
			t.Errorf("%q: %s", in[:n], d)
		}
		compared++
	}
	t.Logf("compared %d requests with net/http", compared)
	if compared < 20 {
		t.Errorf("only %d requests compared", compared)
	}
}

// TestNetHTTPAgreesOnRejects checks a few rejections net/http shares, so
// the differential test is not comparing against a parser that accepts
// everything.
func TestNetHTTPAgreesOnRejects(t *testing.T) {
	for _, in := range []string{
		"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",             // two Hosts
		"GET / HTTP/1.1\r\nHost: a\r\nX-A: b\x00c\r\n\r\n",         // NUL in value
		"GET / HTTP/1.1\r\nHost: a\r\nX(A): b\r\n\r\n",             // non-token name
		"G(T / HTTP/1.1\r\nHost: a\r\n\r\n",                        // non-token method
		"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: +1\r\n\r\n", // signed length
	} {
		var req Request
		_, ours := ParseRequest([]byte(in), &req)
		_, theirs := nethttp.ReadRequest(bufio.NewReader(strings.NewReader(in)))
		if ours == nil || errors.Is(ours, ErrNeedMore) || theirs == nil {
			t.Errorf("%q: ours %v, net/http %v; both should reject", in, ours, theirs)
		}
	}
}
