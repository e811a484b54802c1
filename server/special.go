package server

// The two request targets that name no resource (RFC 9112 §3.2): the
// asterisk form of a server-wide OPTIONS (§3.2.4) and the authority form
// of CONNECT (§3.2.3). A route or an upstream cannot serve them: routing
// "*" or "host:port" by path finds nothing (404), and forwarding them
// would ask an origin about the edge, or open a tunnel. The router and
// the proxy answer them here, the same way on every engine and path.

// AllowedMethods is the Allow field of the answer to "OPTIONS *": the
// methods the edge serves and forwards (RFC 9110 §9.3.7 lets a server
// describe its general capabilities there). CONNECT is not among them.
const AllowedMethods = "GET, HEAD, POST, PUT, DELETE, OPTIONS, PATCH"

// SpecialTarget returns the handler that answers r when its target is the
// asterisk or the authority form, else nil:
//   - "OPTIONS *": 200 with Allow (AllowedMethods) and an empty body
//     (Content-Length: 0), per RFC 9110 §9.3.7;
//   - CONNECT: 501, tunnels are not implemented (RFC 9110 §9.3.6 lets a
//     server refuse; 501 rather than 405 because no resource of the edge
//     supports the method), and the connection closes, since a client
//     may send tunnel bytes right after its request.
//
// The handlers never block (they are Inliners). Origin-form targets cost
// one byte comparison.
func SpecialTarget(r *Request) Handler {
	if p := SpecialPlan(r); p != nil {
		return p.Action
	}
	return nil
}

var (
	optionsStar    = Inline(HandlerFunc(serveOptionsStar))
	connectRefused = Inline(HandlerFunc(serveConnectRefused))
)

// SpecialPlan is SpecialTarget as a Plan without steps, for a Router
// (plan.go): nil for an origin-form or absolute-form target.
func SpecialPlan(r *Request) *Plan {
	t := r.head.Target
	if len(t) > 0 && t[0] == '/' {
		return nil
	}
	switch {
	case string(r.head.Method) == "CONNECT":
		return connectRefusedPlan
	case len(t) == 1 && t[0] == '*':
		// The parser accepts "*" only with OPTIONS.
		return optionsStarPlan
	}
	return nil
}

var (
	optionsStarPlan    = &Plan{Action: optionsStar}
	connectRefusedPlan = &Plan{Action: connectRefused}
)

func serveOptionsStar(w *ResponseWriter, _ *Request) {
	w.AddHeader("Allow", AllowedMethods)
	w.WriteHeader(200)
}

func serveConnectRefused(w *ResponseWriter, _ *Request) {
	w.WriteHeader(501)
	w.AddHeader("Content-Type", "text/plain; charset=utf-8")
	w.SetClose()
	w.WriteString("tunnels are not supported\n")
}
