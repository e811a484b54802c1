package proxy

import (
	"errors"

	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/upstream"
	"golang.org/x/net/http2"
)

// An HTTP/2 upstream that resets a stream (RST_STREAM) says why, and an
// HTTP/2 client acts on the reason: gRPC servers reset with CANCEL when a
// call's deadline passes, and gRPC clients read CANCEL after their own
// deadline as DeadlineExceeded, where a 502 would read as Unavailable and
// a reset with INTERNAL_ERROR as Internal. So the proxy passes the codes
// that mean something end to end on to HTTP/2 clients; codes about the
// upstream hop's own framing (PROTOCOL_ERROR, FLOW_CONTROL_ERROR...) stay
// the proxy's 502 or INTERNAL_ERROR, and HTTP/1.1 clients get 502 or a
// truncated response as before.

// h2FromPeer is the Cause Go's HTTP/2 transport gives a StreamError for an
// RST_STREAM it received, as opposed to one it made for an error of its
// own (x/net/http2's errFromPeer, unexported; TestH2UpstreamResetForwarded
// notices if it changes).
const h2FromPeer = "received from peer"

// upstreamReset reports the code to reset an HTTP/2 client's stream with
// when err is an upstream's RST_STREAM whose code is worth passing on.
// errors.As reaches net/http's bundled copy of StreamError through its As
// method.
func upstreamReset(err error) (http2.ErrCode, bool) {
	var se http2.StreamError
	if !errors.As(err, &se) || se.Cause == nil || se.Cause.Error() != h2FromPeer {
		return 0, false
	}
	switch se.Code {
	case http2.ErrCodeCancel, http2.ErrCodeRefusedStream, http2.ErrCodeEnhanceYourCalm,
		http2.ErrCodeInadequateSecurity:
		return se.Code, true
	}
	return 0, false
}

// h2Kind is the failure kind of an HTTP/2 exchange's error: an upstream's
// reset with CANCEL ends a call that was cancelled or whose deadline
// passed, which is no failure of the target's and no reason to retry.
func h2Kind(err error) upstream.Kind {
	if code, ok := upstreamReset(err); ok && code == http2.ErrCodeCancel {
		return upstream.Cancelled
	}
	return kindOf(err)
}

// forwardReset resets r's stream with the upstream's code when r came over
// HTTP/2 and err is such a reset, and reports whether it did.
func (p *Proxy) forwardReset(w *server.ResponseWriter, r *server.Request, err error) bool {
	code, ok := upstreamReset(err)
	if !ok || !r.HTTP2() && !r.HTTP3() {
		return false
	}
	p.log.Debug("upstream reset the stream", "upstream", p.up.opts.Name, "code", code.String())
	w.AbortStream(uint32(code))
	return true
}
