package server

import "golang.org/x/net/http2"

// AbortStream is Abort with the reason an HTTP/2 client is told: on an
// HTTP/2 stream the RST_STREAM that ends the response carries code (RFC
// 9113 §7) instead of INTERNAL_ERROR. A proxy uses it to pass on an
// upstream's reset, which clients act on: gRPC reads CANCEL as a
// cancelled call (DeadlineExceeded once its deadline has passed, which is
// why a server resets), REFUSED_STREAM as safe to retry. Over HTTP/1.1 it
// is Abort. NO_ERROR (0) is sent as INTERNAL_ERROR: a response cut short
// is not a clean end.
func (w *ResponseWriter) AbortStream(code uint32) {
	w.Abort()
	w.resetCode = http2.ErrCode(code)
}

// h2ResetCode is the code of the reset that ends an aborted stream.
func (w *ResponseWriter) h2ResetCode() http2.ErrCode {
	if w.resetCode == http2.ErrCodeNo {
		return http2.ErrCodeInternal
	}
	return w.resetCode
}
