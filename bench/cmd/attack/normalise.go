package main

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/http2/hpack"
)

// normaliseCase is one request path that the edge matches against a deny
// rule on /admin/.
type normaliseCase struct {
	path string
	// role: the controls show the setup works (/admin/x refused, /pub/x
	// forwarded).
	role role
}

// normaliseCases are issue 27's paths that resolve into /admin/ at a
// backend that normalises, and the regex rewrite whose capture carries
// "../" (/static/(.*) → /assets/{1}).
var normaliseCases = []normaliseCase{
	{path: "/admin/x", role: controlRefused},
	{path: "/pub/x", role: controlForwarded},
	{path: "/pub/../admin/x"},
	{path: "//admin/x"},
	{path: "/%61dmin/x"},
	{path: "/pub/%2e%2e/admin/x"},
	{path: "/admin%2Fx"},
	{path: "/static/../admin/x"},
	{path: "/static/%2e%2e/admin/x"},
}

// normaliseRoutes deny /admin/ to every client, rewrite /static/ by a
// regex, and proxy everything to the recorder.
const normaliseRoutes = `  - match: {path_prefix: /admin/}
    deny: ["0.0.0.0/0", "::/0"]
    proxy: {upstream: backend}
  - match: {path_regex: "^/static/(.*)$"}
    rewrite: {regex: {match: "^/static/(.*)$", to: "/assets/{1}"}}
    proxy: {upstream: backend}
  - match: {path_prefix: /}
    proxy: {upstream: backend}
`

// runNormalise: each path on a connection of its own, over HTTP/1.1 or
// h2c, through the proxy to the recorder; per case, the path the backend
// received and whether a normalising backend would serve it from /admin/.
func runNormalise(ctx context.Context, o *options, v variant) row {
	r := row{scenario: "normalise", v: v}
	s, rec, err := startRecorded(ctx, o, v, normaliseRoutes)
	if err != nil {
		r.result = "error: " + err.Error()
		return r
	}
	defer rec.close()
	defer s.stop()
	outs := make([]string, len(normaliseCases))
	for i, c := range normaliseCases {
		if ctx.Err() != nil {
			break
		}
		id := strconv.Itoa(i)
		if v.kind == protoH2C {
			outs[i] = h2Request(s.addr, false, []hpack.HeaderField{
				{Name: ":method", Value: "GET"}, {Name: ":scheme", Value: "http"},
				{Name: ":authority", Value: host}, {Name: ":path", Value: c.path},
				{Name: strings.ToLower(caseHeader), Value: id},
			}).String()
		} else {
			outs[i] = h1Request(s.addr, fmt.Sprintf("GET %s HTTP/1.1\r\nHost: %s\r\n%s: %s\r\nConnection: close\r\n\r\n", c.path, host, caseHeader, id))
		}
	}
	time.Sleep(recordSettle)
	var t tally
	for i, c := range normaliseCases {
		t.add(c.role, c.path, rec.byCase(strconv.Itoa(i)), outs[i], judgeAdmin)
	}
	r.result, r.notes = t.report("into /admin/ at the backend", "routed elsewhere")
	return r
}

// judgeAdmin: did the backend get a path that it would resolve into
// /admin/?
func judgeAdmin(q recorded) (bool, string) {
	target := requestTarget(q.line)
	if intoAdmin(target, decodeUnreserved) {
		return true, fmt.Sprintf("at %q", target)
	}
	if intoAdmin(target, func(s string) string {
		if u, err := url.PathUnescape(s); err == nil {
			return u
		}
		return s
	}) {
		return false, fmt.Sprintf("at %q (into /admin/ only where %%2F is decoded)", target)
	}
	return false, fmt.Sprintf("at %q", target)
}

// requestTarget is the second word of a request line (the whole line
// if it has no space).
func requestTarget(line string) string {
	f := strings.Split(line, " ")
	if len(f) < 2 {
		return line
	}
	return f[1]
}

// intoAdmin says whether target, its path decoded by decode and cleaned
// as an nginx-like backend does (dot segments removed, slashes merged),
// falls in /admin/.
func intoAdmin(target string, decode func(string) string) bool {
	p, _, _ := strings.Cut(target, "?")
	if !strings.HasPrefix(p, "/") {
		return false
	}
	p = path.Clean(decode(p))
	return p == "/admin" || strings.HasPrefix(p, "/admin/")
}

// decodeUnreserved decodes the percent-encoded unreserved characters of s
// (ALPHA, DIGIT, "-", ".", "_", "~": RFC 3986 §2.3 says they are
// equivalent to the characters) and keeps every other escape.
func decodeUnreserved(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
				if c := byte(n); isAlnum(c) || strings.IndexByte("-._~", c) >= 0 {
					b.WriteByte(c)
					i += 2
					continue
				}
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// h1Request sends req on a connection of its own and returns the status of
// the answer, "closed" or "no answer".
func h1Request(addr, req string) string {
	start := time.Now()
	c, err := net.DialTimeout("tcp", addr, dialTimeout)
	if err != nil {
		return "error: " + err.Error()
	}
	defer c.Close()
	c.SetWriteDeadline(start.Add(h2RequestBound))
	if _, err := c.Write([]byte(req)); err != nil {
		return "closed"
	}
	out := watch(c, start, start.Add(h2RequestBound))
	switch {
	case out.open:
		return "no answer"
	case out.status != 0:
		return strconv.Itoa(out.status)
	}
	return "closed"
}
