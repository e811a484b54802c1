package router

import (
	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/rewrite"
)

// Compress wraps h so that its responses are compressed by c (issue 23):
// the wrapper only arms the request (server.Request.SetCompression), and
// the server's ResponseWriter applies c to whatever h writes. It keeps h's
// Inliner and LoopProxier: a route's inline answers are compressed on the
// loop, and the loop's own proxy compresses the upstream's body as it
// relays it (the relay writes through the same ResponseWriter, at most
// one 16 KiB upstream read per event, so the CPU a turn spends
// compressing is bounded by that read).
func Compress(h server.Handler, c server.Compressor) server.Handler {
	return &compressed{h: h, c: c}
}

type compressed struct {
	h server.Handler
	c server.Compressor
}

func (x *compressed) ServeEdge(w *server.ResponseWriter, r *server.Request) {
	r.SetCompression(x.c)
	x.h.ServeEdge(w, r)
}

// InlineHandler implements server.Inliner: h's inline handler, with the
// request armed (the loop then runs that handler on the same request).
func (x *compressed) InlineHandler(r *server.Request) server.Handler {
	in, ok := x.h.(server.Inliner)
	if !ok {
		return nil
	}
	// Armed first: h may decide by it (a files handler keeps large
	// compressed files off the loop). Left armed if h declines: the
	// request is this route's wherever it is served.
	r.SetCompression(x.c)
	return in.InlineHandler(r)
}

// LoopProxy implements server.LoopProxier.
func (x *compressed) LoopProxy(r *server.Request) server.LoopUpstream {
	lp, ok := x.h.(server.LoopProxier)
	if !ok {
		return nil
	}
	up := lp.LoopProxy(r)
	if up != nil {
		r.SetCompression(x.c)
	}
	return up
}

// templates passes h's path_regex templates on (captureUser).
func (x *compressed) templates() []*rewrite.Template {
	if cu, ok := x.h.(captureUser); ok {
		return cu.templates()
	}
	return nil
}
