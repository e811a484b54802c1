package server

import (
	"strconv"

	"github.com/simdedge/simdedge/server/metrics"
)

// A route decided once (issue 28). A Router (server/router's Table and
// Switch) looks a request's route up once and returns its Plan: the
// route's steps as values (a gate, a rewrite, an HSTS value, a compression
// policy) and its action (the Handler that answers: a fixed response, a
// redirect, files, a Go handler, a proxy). The request carries the plan
// until it ends (Request.plan, set by the engine from that one lookup), so
// that a request the event loop looked at and then handed to a goroutine,
// or proxied itself, is not looked up again; a table swap (SIGHUP) cannot
// split it between two tables either.
//
// Every engine runs a plan through the one runner below (runSteps, then the
// action): the goroutine engine, the loop's inline path, the loop's own
// proxy, HTTP/2 streams and the message transports. The engines differ only
// in where they may run it: a goroutine may block, the loop and the other
// inline paths may not, so they first ask inline and loopUpstream whether
// the steps and the action can run without blocking.
//
// Modelled on Envoy's router, where a request's route is resolved once
// into an entry that the filters then read.

// Router is an optional interface of a Handler: Route returns the plan of
// r, looked up from r's head (method, target, host, fields; the target
// normalised, paths.go). It must not block and must not return nil (a
// router answers the requests no route takes with a plan of its own, a
// 404). The engines call it once per request.
type Router interface {
	Route(r *Request) *Plan
}

// Plan is a route's steps and its action. A router builds one per route,
// once; a Plan is immutable and shared by every request of the route.
// The runner applies the steps in this order:
//
//  1. the gate's admission (allow/deny, rate limit): decided once per
//     request on the request as received, so that asking where a request
//     can run never takes a second rate-limit token;
//  2. the rewrite (path, request and response fields); a refused
//     expansion is answered 400;
//  3. a refused admission is answered (400, 403 or 429), carrying the
//     response field edits of step 2;
//  4. the gate's credentials (Basic, forward auth), which may answer;
//  5. HSTS on TLS connections;
//  6. compression, armed for the action's response;
//  7. the action.
type Plan struct {
	// Metrics are the route's counters (nil: the server's Unmatched).
	Metrics *metrics.Route
	// Gate is the route's admission and credentials (nil: none).
	Gate Gate
	// Rewrite rewrites the request and arms the response's field edits
	// (nil: none).
	Rewrite Rewriter
	// HSTS is the Strict-Transport-Security value added to responses on
	// TLS connections ("" none; RFC 6797 §7.2 forbids it over plain
	// HTTP). It is added before the action writes, so it comes first
	// when an upstream sends its own (a client honours the first, §8.1).
	HSTS string
	// Compress is the route's response compression (nil: none).
	Compress Compressor
	// Action answers the request once the steps let it through. It may
	// be an Inliner (it can answer on the loop) or a LoopProxier (the
	// loop can proxy it).
	Action Handler
}

// Gate is a route's gatekeeping step (server/router builds it from
// server/access and server/ratelimit). Gate and Rewriter are interfaces,
// each with one implementation, because their policy sits above server
// (router imports server): the runner here decides when they run, they
// decide what.
type Gate interface {
	// Admit takes the admission decision: 0 admits, else the status to
	// answer (400, 403, 429) and, for 429, the Retry-After seconds. It
	// never blocks. The runner asks once per request.
	Admit(r *Request) (status, retryAfter int)
	// Pending reports whether checking r's credentials needs a
	// goroutine (a bcrypt comparison, a round trip to an auth service).
	Pending(r *Request) bool
	// Authorize checks r's credentials; false means it answered w (401,
	// or the auth service's answer). It blocks only when Pending said
	// so.
	Authorize(w *ResponseWriter, r *Request) bool
}

// Rewriter is a route's rewrite step (server/router's policy).
type Rewriter interface {
	// Rewrite rewrites r's target and fields and leaves the response's
	// field edit in r's Edit; an error refuses the request (400).
	Rewrite(r *Request) error
}

// ServeEdge runs p on a goroutine: the steps, then the action. A Plan is a
// Handler so that the engines, and a router asked as a plain Handler, run
// it the same way.
func (p *Plan) ServeEdge(w *ResponseWriter, r *Request) {
	if p.runSteps(w, r) {
		p.Action.ServeEdge(w, r)
	}
}

// runSteps applies the steps 1 to 6 to r and w (see Plan); false means a
// step answered.
func (p *Plan) runSteps(w *ResponseWriter, r *Request) bool {
	status, retry := p.admit(r)
	if p.Rewrite != nil {
		if p.Rewrite.Rewrite(r) != nil {
			answerPlain(w, statusBadRequest, "bad request\n")
			return false
		}
		w.SetHeaderEdit(r.edit.RespDrop, r.edit.RespAdd)
	}
	if status != 0 {
		answerGate(w, status, retry)
		return false
	}
	if p.Gate != nil && !p.Gate.Authorize(w, r) {
		return false
	}
	if p.HSTS != "" && r.TLS() {
		w.AddHeader(hstsField, p.HSTS)
	}
	r.comp = p.Compress
	return true
}

const (
	hstsField        = "Strict-Transport-Security"
	statusBadRequest = 400
	statusTooMany    = 429
)

// admit is the gate's admission, decided once per request (the engine may
// ask inline and loopUpstream before it runs the steps, and a handed-off
// request runs them again on its goroutine).
func (p *Plan) admit(r *Request) (status, retry int) {
	if p.Gate == nil {
		return 0, 0
	}
	if !r.gateDone {
		st, ra := p.Gate.Admit(r)
		r.gateDone, r.gateStatus, r.gateRetry = true, uint16(st), uint32(ra)
	}
	return int(r.gateStatus), int(r.gateRetry)
}

// ready reports whether p's steps can run without blocking.
func (p *Plan) ready(r *Request) bool {
	if st, _ := p.admit(r); st != 0 {
		return true // the refusal is answered
	}
	return p.Gate == nil || !p.Gate.Pending(r)
}

// inline returns the handler that runs p on an engine that must not block
// (the loop, an HTTP/2 connection's reader, a message transport's
// receiver), or nil when r needs a goroutine. The handler it returns is p
// itself, seen as an inlinePlan: no allocation.
func (p *Plan) inline(r *Request) Handler {
	if !p.ready(r) {
		return nil
	}
	if st, _ := p.admit(r); st != 0 {
		return (*inlinePlan)(p)
	}
	in, ok := p.Action.(Inliner)
	if !ok || in.InlineHandler(r) == nil {
		return nil
	}
	return (*inlinePlan)(p)
}

// needsGoroutine reports whether r needs a goroutine whatever its
// admission decides: its credentials do (Gate.Pending), or its action
// offers no inline handler. Unlike inline it takes no admission, for an
// engine that cannot carry one across a hand-off (message transports).
func (p *Plan) needsGoroutine(r *Request) bool {
	if p.Gate != nil && p.Gate.Pending(r) {
		return true
	}
	in, ok := p.Action.(Inliner)
	return !ok || in.InlineHandler(r) == nil
}

// loopUpstream returns the upstream the loop proxies r to itself, or nil:
// the action is a LoopProxier that takes r and the steps need no
// goroutine. The loop runs the steps once the request has begun
// (proxyStart), before its first attempt.
func (p *Plan) loopUpstream(r *Request) LoopUpstream {
	lp, ok := p.Action.(LoopProxier)
	if !ok || !p.ready(r) {
		return nil
	}
	return lp.LoopProxy(r)
}

// inlinePlan is a Plan run inline: the steps, then the handler the
// action's InlineHandler gives (asked again: an Inliner answers from r
// alone, and holding its answer would take an allocation per request).
type inlinePlan Plan

func (x *inlinePlan) ServeEdge(w *ResponseWriter, r *Request) {
	p := (*Plan)(x)
	if !p.runSteps(w, r) {
		return
	}
	if ih := p.Action.(Inliner).InlineHandler(r); ih != nil {
		ih.ServeEdge(w, r)
		return
	}
	p.Action.ServeEdge(w, r)
}

// planFor returns the plan of r: the one r carries (an engine looked it
// up before handing r on), else rt's, which r then carries.
func (r *Request) planFor(rt Router) *Plan {
	if r.plan == nil {
		r.plan = rt.Route(r)
	}
	return r.plan
}

// handlerFor is the handler that serves r on a goroutine: its plan.
func (s *Server) handlerFor(r *Request) Handler { return r.planFor(s.router) }

// onePlan routes every request to one plan: a server's Handler that is not
// a Router, as a plan without steps.
type onePlan struct{ p *Plan }

func (o onePlan) Route(*Request) *Plan { return o.p }

// answerPlain answers status with a short text body.
func answerPlain(w *ResponseWriter, status int, body string) {
	w.AddHeader("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	w.WriteString(body)
}

// answerGate answers a request its plan's gate refused (Plan.Gate's
// Admit): 429 with Retry-After, 400 for a repeated Authorization field,
// else 403.
func answerGate(w *ResponseWriter, status, retryAfter int) {
	switch status {
	case statusTooMany:
		var b [12]byte
		w.AddHeaderBytes(retryAfterName, strconv.AppendInt(b[:0], int64(retryAfter), 10))
		answerPlain(w, statusTooMany, "too many requests\n")
	case statusBadRequest:
		answerPlain(w, statusBadRequest, "more than one Authorization field\n")
	default:
		answerPlain(w, statusForbidden, "forbidden\n")
	}
}

const statusForbidden = 403

var retryAfterName = []byte("Retry-After")
