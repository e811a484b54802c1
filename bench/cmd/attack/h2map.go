package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/http2/hpack"
)

const (
	protoH2C = "h2c"
	protoH2  = "h2 TLS"
	protoH1  = "HTTP/1.1"
	// recordSettle is the wait, after the last case, for a request the
	// proxy forwards after it answered the client (a reset stream whose
	// upstream request was already under way).
	recordSettle = 200 * time.Millisecond
	// publicHost is the :authority the edge routes on; adminHost is the
	// virtual host a route denies to everyone.
	publicHost = "public.example"
	adminHost  = "admin.example"
)

// h2mapCase is one HTTP/2 request whose mapping to HTTP/1.1 is attacked.
type h2mapCase struct {
	name      string
	method    string
	path      string
	authority string
	// host, if not empty, is sent as a regular host field.
	host string
}

// h2mapCases are issue 27's HTTP/2 mapping cases; the first is the
// control, a plain request that should reach the backend as it is.
var h2mapCases = []h2mapCase{
	{name: "control", method: "GET", path: "/pub", authority: publicHost},
	{name: "host≠:authority", method: "GET", path: "/pub", authority: publicHost, host: adminHost},
	{name: ":method with SP", method: "GET /admin/x", path: "/pub", authority: publicHost},
	{name: ":path SP", method: "GET", path: "/pub/a b", authority: publicHost},
	{name: ":path HTAB", method: "GET", path: "/pub/a\tb", authority: publicHost},
	{name: ":path #", method: "GET", path: "/pub/a#b", authority: publicHost},
	{name: ":path 0xE9", method: "GET", path: "/pub/caf\xe9", authority: publicHost},
	{name: "GET *", method: "GET", path: "*", authority: publicHost},
	{name: ":authority userinfo", method: "GET", path: "/pub", authority: "user@" + publicHost},
	{name: ":authority /", method: "GET", path: "/pub", authority: publicHost + "/x"},
	{name: ":authority ?", method: "GET", path: "/pub", authority: publicHost + "?x"},
	{name: ":authority #", method: "GET", path: "/pub", authority: publicHost + "#x"},
	{name: `:authority \`, method: "GET", path: "/pub", authority: publicHost + `\x`},
	{name: ":authority SP", method: "GET", path: "/pub", authority: "public .example"},
}

// h2mapRoutes deny the admin virtual host to every client and proxy the
// rest to the recorder.
const h2mapRoutes = `  - match: {host: ` + adminHost + `}
    deny: ["0.0.0.0/0", "::/0"]
    proxy: {upstream: backend}
  - match: {path_prefix: /}
    proxy: {upstream: backend}
`

// startRecorded starts a recorder and a simdedge process for v on one
// listener: h2c beside HTTP/1.1 for protoH2C and protoH1, TLS for protoH2.
func startRecorded(ctx context.Context, o *options, v variant, routes string) (*server, *recorder, error) {
	rec, err := startRecorder()
	if err != nil {
		return nil, nil, err
	}
	addrs, err := freeAddrs(1)
	if err != nil {
		rec.close()
		return nil, nil, err
	}
	l := listenerSpec{addr: addrs[0]}
	if v.kind == protoH2 {
		cert, err := suiteCert(o)
		if err != nil {
			rec.close()
			return nil, nil, err
		}
		l.tls = &cert
	}
	s, err := launch(ctx, o, customYAML(o, v, []listenerSpec{l}, rec.addr, routes), l.addr)
	if err != nil {
		rec.close()
		return nil, nil, err
	}
	return s, rec, nil
}

// runH2Map: each case on a connection of its own, through the proxy to
// the recorder; per case, what the backend received, or how the edge
// refused it.
func runH2Map(ctx context.Context, o *options, v variant) row {
	r := row{scenario: "h2map", v: v}
	s, rec, err := startRecorded(ctx, o, v, h2mapRoutes)
	if err != nil {
		r.result = "error: " + err.Error()
		return r
	}
	defer rec.close()
	defer s.stop()
	useTLS := v.kind == protoH2
	scheme := "http"
	if useTLS {
		scheme = "https"
	}
	outs := make([]h2outcome, len(h2mapCases))
	for i, c := range h2mapCases {
		if ctx.Err() != nil {
			break
		}
		fields := []hpack.HeaderField{
			{Name: ":method", Value: c.method},
			{Name: ":scheme", Value: scheme},
			{Name: ":authority", Value: c.authority},
			{Name: ":path", Value: c.path},
		}
		if c.host != "" {
			fields = append(fields, hpack.HeaderField{Name: "host", Value: c.host})
		}
		fields = append(fields, hpack.HeaderField{Name: strings.ToLower(caseHeader), Value: strconv.Itoa(i)})
		outs[i] = h2Request(s.addr, useTLS, fields)
	}
	time.Sleep(recordSettle)
	var t tally
	for i, c := range h2mapCases {
		judge := func(q recorded) (bool, string) {
			if d := mappingDefect(q, c.authority); d != "" {
				return true, d
			}
			return false, "forwarded clean"
		}
		r := attack
		if i == 0 {
			r = controlForwarded
		}
		t.add(r, c.name, rec.byCase(strconv.Itoa(i)), outs[i].String(), judge)
	}
	r.result, r.notes = t.report("malformed at the backend", "forwarded clean")
	return r
}

// mappingDefect says what is wrong with a request as the backend got it,
// against an HTTP/1.1 parser as strict as RFC 9112 and the :authority the
// edge routed on; "" if nothing is.
func mappingDefect(q recorded, authority string) string {
	parts := strings.Split(q.line, " ")
	if len(parts) != 3 || !isToken(parts[0]) || (parts[2] != "HTTP/1.1" && parts[2] != "HTTP/1.0") {
		return fmt.Sprintf("line %q", q.line)
	}
	method, target := parts[0], parts[1]
	if target == "*" {
		if method != "OPTIONS" {
			return fmt.Sprintf("line %q", q.line)
		}
	} else if !validOriginForm(target) {
		return fmt.Sprintf("target %q", target)
	}
	if len(q.hosts) != 1 {
		return fmt.Sprintf("%d Host fields", len(q.hosts))
	}
	h := q.hosts[0]
	if !validHost(h) {
		return fmt.Sprintf("Host %q", h)
	}
	if validHost(authority) && !strings.EqualFold(h, authority) {
		return fmt.Sprintf("Host %q, not :authority", h)
	}
	return ""
}

// isToken: RFC 9110 §5.6.2 tchar+.
func isToken(s string) bool {
	return s != "" && alnumOr(s, "!#$%&'*+-.^_`|~")
}

// validOriginForm: "/" then pchar, "/", "?" and "%" (RFC 9112 §3.2.1,
// percent-encodings not checked).
func validOriginForm(s string) bool {
	return strings.HasPrefix(s, "/") && alnumOr(s, "-._~!$&'()*+,;=:@/?%")
}

// validHost: a reg-name or IP literal and an optional port (RFC 9110
// §7.2): no userinfo, path, query, fragment, backslash or space.
func validHost(s string) bool {
	return s != "" && alnumOr(s, "-._~!$&'()*+,;=:%[]")
}

// alnumOr says whether every byte of s is a letter, a digit or one of
// extra.
func alnumOr(s, extra string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isAlnum(c) && strings.IndexByte(extra, c) < 0 {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
