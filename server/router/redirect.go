package router

import (
	"errors"

	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/rewrite"
)

// RedirectStatuses are the statuses a redirect may answer with:
// 301 and 308 permanent, 302, 303 and 307 temporary; 307 and 308 keep
// the method and body (RFC 9110 §15.4).
var RedirectStatuses = []int{301, 302, 303, 307, 308}

// DefaultRedirectStatus is 308, as Caddy's redir defaults to a permanent
// redirect: unlike 301, a client must repeat the method and body, so a
// POST stays a POST.
const DefaultRedirectStatus = 308

var ErrRedirectStatus = errors.New("router: redirect status must be 301, 302, 303, 307 or 308")

// Redirect answers every request with status and a Location expanded
// from to (server/rewrite's variables; "https://{host}{uri}" keeps the
// path and the query). The answer has no body. It runs on the event loop
// (an Inliner) and allocates nothing for a Location up to 512 bytes. An
// expansion with bytes a URI may not hold (a space, a control byte) is
// refused with 400.
func Redirect(to rewrite.Template, status int) (server.Handler, error) {
	for _, s := range RedirectStatuses {
		if s == status {
			return &redirect{to: to, status: status}, nil
		}
	}
	return nil, ErrRedirectStatus
}

type redirect struct {
	to     rewrite.Template
	status int
}

// redirectScratch is the stack buffer the Location is expanded in; a
// longer one grows onto the heap.
const redirectScratch = 512

var locationName = []byte("Location")

// InlineHandler implements server.Inliner: a redirect never blocks.
func (rd *redirect) InlineHandler(*server.Request) server.Handler { return rd }

func (rd *redirect) templates() []*rewrite.Template { return []*rewrite.Template{&rd.to} }

func (rd *redirect) ServeEdge(w *server.ResponseWriter, r *server.Request) {
	var env rewrite.Env
	fillEnv(&env, r)
	if rd.to.MaxCapture() >= 0 {
		// The route's policy wrapper took them (withPolicy).
		ed := r.Edit()
		env.Caps, env.CapSrc = ed.Caps, ed.CapSrc
	}
	var scratch [redirectScratch]byte
	loc, err := rd.to.AppendURI(scratch[:0], &env)
	if err != nil {
		badRequest.ServeEdge(w, r)
		return
	}
	w.AddHeaderBytes(locationName, loc)
	w.WriteHeader(rd.status)
}
