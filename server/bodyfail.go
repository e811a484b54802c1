package server

import "net/http"

// A request whose body failed to arrive (over Limits.MaxBodyBytes,
// malformed chunked framing, too slow) cannot have been served, whatever
// its handler answered: the handler saw an error instead of the body.
// answerBodyError makes the answer say so, with the status that names the
// client's fault (413, 400, 408; StatusFor), so that every handler, a
// net/http one through server/stdhttp included, answers a chunked body over
// the limit with 413 as the built-in echo does, over HTTP/1.1 and HTTP/2
// alike. A client error the handler chose itself (4xx) stands: it may carry
// a body of its own. A response already committed cannot change.

// answerBodyFailure is answerBodyError for an HTTP/1.1 connection, which
// closes after the answer whatever it is (the body's framing is lost).
func (c *conn) answerBodyFailure() {
	if err := c.req.body.err; err != nil {
		c.resp.closeConn = true
		answerBodyError(&c.resp, err)
	}
}

// answerBodyError replaces the answer of a request whose body failed with
// err (see above).
func answerBodyError(w *ResponseWriter, err error) {
	if w.committed || w.status >= 400 && w.status < 500 {
		return
	}
	status := StatusFor(err)
	if !w.Reset() {
		return
	}
	w.WriteHeader(status)
	w.AddHeader("Content-Type", "text/plain; charset=utf-8")
	w.WriteString(http.StatusText(status))
	w.WriteString("\n")
}
