package router

import (
	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/rewrite"
)

// A route's steps are values in its plan (server.Plan), not wrappers
// around its handler: Gate, HSTS and Compress return a stepped, which
// holds the steps given so far and the action they lead to, and New puts
// them into the route's plan. The server's plan runner applies them in one
// order on every engine (server.Plan), whatever order they were given in.

// stepped is a handler with steps: a plan without a route.
type stepped struct{ plan server.Plan }

// addStep returns h with the step set puts into its plan. set reports
// false when the plan already has that step: the step then goes on a new
// plan whose action is h, as a wrapper would (each plan's steps run in
// its order, the outer plan's first).
func addStep(h server.Handler, set func(*server.Plan) bool) server.Handler {
	s := &stepped{}
	if in, ok := h.(*stepped); ok {
		s.plan = in.plan
	} else {
		s.plan.Action = h
	}
	if !set(&s.plan) {
		s.plan = server.Plan{Action: h}
		set(&s.plan)
	}
	return s
}

// ServeEdge runs the steps and the action, for a stepped handler used
// outside a Table.
func (s *stepped) ServeEdge(w *server.ResponseWriter, r *server.Request) { s.plan.ServeEdge(w, r) }

// planOf is the plan a route's handler h starts from: its steps and
// action, or h as the action.
func planOf(h server.Handler) server.Plan {
	if s, ok := h.(*stepped); ok {
		return s.plan
	}
	return server.Plan{Action: h}
}

// templates passes the action's path_regex templates on (captureUser),
// so that a redirect with steps still gets its captures taken.
func (s *stepped) templates() []*rewrite.Template {
	if cu, ok := s.plan.Action.(captureUser); ok {
		return cu.templates()
	}
	return nil
}
