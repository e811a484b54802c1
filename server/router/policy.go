package router

import (
	"errors"
	"regexp"

	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/rewrite"
)

// Policy is what a route changes between its match and its handler
// (issue 23): the path (the query string is kept), the request's header
// fields, and the header fields of every response the route gives (its
// handler's, a proxied upstream's, the proxy's own 502/504, on both
// proxy paths).
//
// The request's target and fields are replaced, not copied: the handler
// and the proxy see the rewritten request (Echo reports it, a proxy
// forwards it), in the request's Edit buffer (server.Request.Edit), so a
// warm request allocates nothing unless the route's templates use
// path_regex captures (Go's regexp returns them in a new slice: one
// allocation per request). Routing is done on the request as received.
//
// Order: the captures of Match.PathRegex are taken from the path as
// received; then the path is rewritten; then the request's fields are
// edited and the response's field lines expanded, with {path}, {query}
// and {uri} the rewritten ones (nginx's $uri, not $request_uri). An
// expansion that would put a forbidden byte in a value or the path
// (server/rewrite's ErrUnsafe: CR, LF, NUL...) refuses the request with
// 400, before the handler runs and before anything reaches an upstream.
type Policy struct {
	Path     *rewrite.PathRewrite
	Request  rewrite.HeaderOps
	Response rewrite.HeaderOps
}

// ErrCaptures: a template names a capture group the route's path_regex
// does not have (or the route has none).
var ErrCaptures = errors.New("router: a template names a capture of match.path_regex that does not exist")

// captureUser is a handler whose templates read path_regex captures
// (Redirect): it needs the policy wrapper to take them.
type captureUser interface {
	templates() []*rewrite.Template
}

// withPolicy returns the rewrite step of rt's plan: nil when rt has no
// Policy, its action reads no captures and it forwards the normalised
// target.
func withPolicy(rt *Route) (server.Rewriter, error) {
	groups := -1
	if rt.Match.PathRegex != nil {
		groups = rt.Match.PathRegex.NumSubexp()
	}
	var tmpls []*rewrite.Template
	if cu, ok := rt.Handler.(captureUser); ok {
		tmpls = cu.templates()
	}
	if p := rt.Policy; p != nil {
		for _, ops := range []*rewrite.HeaderOps{&p.Request, &p.Response} {
			ops.Templates(func(_ string, t *rewrite.Template) error {
				tmpls = append(tmpls, t)
				return nil
			})
		}
	}
	caps := false
	for _, t := range tmpls {
		if t.CheckCaptures(groups) != nil {
			return nil, ErrCaptures
		}
		caps = caps || t.MaxCapture() >= 0
	}
	if rt.Policy == nil && !caps && !rt.PathAsSent {
		return nil, nil
	}
	p := &policyStep{re: rt.Match.PathRegex, caps: caps, asSent: rt.PathAsSent}
	if rt.Policy != nil {
		p.pol = *rt.Policy
	}
	return p, nil
}

// policyStep is a route's Policy as the rewrite step of its plan
// (server.Plan.Rewrite): the plan runner applies it once per request,
// before the action (on the loop's own proxy too, before the first
// attempt: the loop then sends r's rewritten head, and may resend it).
type policyStep struct {
	pol  Policy
	re   *regexp.Regexp
	caps bool // take re's captures per request
	// asSent: the route forwards the target as sent (Route.PathAsSent).
	asSent bool
}

// badRequest answers a request whose expansion was refused (a redirect's).
var badRequest = Respond(400, "bad request\n", [][2]string{{"Content-Type", "text/plain; charset=utf-8"}})

// Rewrite implements server.Rewriter.
func (p *policyStep) Rewrite(r *server.Request) error { return p.apply(r) }

// apply rewrites r's target and fields and expands the response's field
// lines into r's Edit buffer.
func (p *policyStep) apply(r *server.Request) error {
	if p.asSent {
		r.SendAsSent()
	}
	ed := r.Edit()
	buf := ed.Buf[:0]
	t := r.Target()
	var env rewrite.Env
	start, end := fillEnv(&env, r)
	path := env.Path
	ed.Caps, ed.CapSrc = nil, nil
	ed.RespDrop, ed.RespAdd = nil, nil
	if p.caps && p.re != nil {
		ed.Caps, ed.CapSrc = p.re.FindSubmatchIndex(path), path
		env.Caps, env.CapSrc = ed.Caps, ed.CapSrc
	}
	if pr := p.pol.Path; pr != nil {
		n := len(buf)
		buf = append(buf, t[:start]...)
		m := len(buf)
		var ok bool
		var err error
		if buf, ok, err = pr.Append(buf, path, &env); err != nil {
			ed.Buf = buf[:0]
			return err
		}
		if ok {
			env.Path = buf[m:len(buf):len(buf)]
			buf = append(buf, t[end:]...)
			r.SetTarget(buf[n:len(buf):len(buf)])
		} else {
			buf = buf[:n]
		}
	}
	var err error
	if !p.pol.Request.Empty() {
		var hs = r.Headers()
		if hs, buf, err = p.pol.Request.Edit(hs, buf, &env); err != nil {
			ed.Buf = buf[:0]
			return err
		}
		r.SetHeaders(hs)
	}
	if !p.pol.Response.Empty() {
		n := len(buf)
		if buf, err = p.pol.Response.AppendLines(buf, &env); err != nil {
			ed.Buf = buf[:0]
			return err
		}
		ed.RespDrop, ed.RespAdd = p.pol.Response.Dropped(), buf[n:len(buf):len(buf)]
	}
	ed.Buf = buf
	return nil
}

var slash = []byte("/")

// pathSpan is where the path of an origin-form or absolute-form target
// lies: t[start:end], end at the '?' or the end (no fragment: the parser
// refuses one).
func pathSpan(t []byte) (start, end int) {
	if len(t) > 0 && t[0] != '/' {
		if i := indexString(t, "://"); i >= 0 {
			start = i + 3
			for start < len(t) && t[start] != '/' && t[start] != '?' {
				start++
			}
		} else {
			start = len(t) // authority form or "*": no path
		}
	}
	end = start
	for end < len(t) && t[end] != '?' {
		end++
	}
	return start, end
}

// fillEnv sets the variables that come from r alone and returns where
// the path lies in r's target (pathSpan).
func fillEnv(e *rewrite.Env, r *server.Request) (start, end int) {
	e.RemoteAddr = r.RemoteIP()
	e.ClientIP = clientIP(r)
	e.Host = hostOf(r)
	if r.TLS() {
		e.Scheme = schemeHTTPS
	} else {
		e.Scheme = schemeHTTP
	}
	e.RequestID = requestID(r)
	t := r.Target()
	start, end = pathSpan(t)
	e.Path = t[start:end]
	if len(e.Path) == 0 {
		e.Path = slash // absolute form without a path
	}
	e.Query, e.HasQuery = nil, false
	if end < len(t) {
		e.Query, e.HasQuery = t[end+1:], true
	}
	return start, end
}

var (
	schemeHTTP  = []byte("http")
	schemeHTTPS = []byte("https")
)

// clientIP is {client_ip}: the client's address as trusted_proxies and the
// PROXY protocol decide it (Request.ClientIP).
func clientIP(r *server.Request) []byte { return r.ClientIPText() }

// requestID is {request_id}: the request's ID (Request.RequestID; empty
// when request IDs are off). A variable so that tests can make it return
// what a client-supplied ID might hold.
var requestID = func(r *server.Request) []byte { return r.RequestID() }
