package server

// Inliner is an optional interface of a Handler, asked by the event-loop
// engine (Server.ServeLoop) before it serves a request on the loop's own
// goroutine. The loop asks only once the request's head is parsed and its
// body, if any, is wholly in the read buffer; the Request's head accessors
// (Method, Target, Host, Headers) are valid during the call.
//
// InlineHandler returns the handler that serves r without ever blocking —
// no network or disk I/O, no waits on other goroutines, no long locks,
// nothing but reading the Request (its body included, which is buffered)
// and writing the ResponseWriter — or nil when r needs a goroutine. A nil
// answer hands the connection, with the bytes already buffered, to the
// goroutine-per-connection path for the rest of its life. A handler that
// blocks inline stalls every connection of its loop.
//
// A Router's plans (plan.go) ask their action: the route is looked up once
// and its steps run before the handler InlineHandler returns.
type Inliner interface {
	InlineHandler(r *Request) Handler
}

// Inline declares h non-blocking in the sense of Inliner: the event loop
// runs it for every request whose body is buffered. Use it for handlers
// that only compute a response from the request.
func Inline(h Handler) Handler { return inlined{h} }

type inlined struct{ Handler }

func (h inlined) InlineHandler(*Request) Handler { return h.Handler }
