package server

import (
	"errors"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/simdedge/simdedge/internal/ascii"
	phttp "github.com/simdedge/simdedge/parse/http"
	"golang.org/x/net/http2"
)

// sink is where a ResponseWriter's bytes go: a stream connection's output
// buffer, or a message transport's reply.
type sink interface {
	// flushOut is called when out has grown past a threshold (final
	// false) or the response is complete (final true); the sink decides
	// whether to write now.
	flushOut(final bool) error
}

// streamThreshold is the body size up to which a response is held whole,
// so that it goes out with a Content-Length; beyond it the head is sent and
// the body streams (chunked unless the handler declared its length).
const streamThreshold = 32 << 10

// ResponseWriter writes one response into a pooled buffer with correct
// framing. Headers are added with AddHeader, the status set by WriteHeader
// (200 if never called), the body written with Write. A body that fits in
// 32 KiB is sent with Content-Length; a longer one, or one sent with Flush,
// goes out chunked (HTTP/1.1) or with the length set by SetContentLength.
// The server adds Date (unless the handler set one) and the Connection field; handlers must not set
// Transfer-Encoding or Connection themselves (they are ignored, except
// "Connection: close", which closes the connection after the response).
//
// A ResponseWriter is valid only until the handler returns.
type ResponseWriter struct {
	sink sink
	out  *[]byte

	status  int
	hdr     []byte // "Name: value\r\n" lines added by the handler
	body    []byte // held body while not committed
	clen    int64  // declared length, -1 if none
	written int64

	committed bool
	chunked   bool
	headReq   bool
	http10    bool
	keepAlive bool // HTTP/1.0 client asked for keep-alive
	closeConn bool
	hasDate   bool // the handler set Date (a proxy forwarding the origin's)
	aborted   bool
	// resetCode is the HTTP/2 error code an aborted stream is reset
	// with (AbortStream, h2reset.go); NO_ERROR means INTERNAL_ERROR.
	resetCode http2.ErrCode
	// trailerOK: trailers go out after the last chunk (trailers.go),
	// whose field lines trailers holds.
	trailerOK bool
	trailers  []byte
	err       error
	// now, when set by the sink before finish, is the time to stamp in
	// Date (it saves a clock read per request); zero means read the clock.
	now time.Time
	// editDrop, editAdd: a route's response header edit (edit.go).
	editDrop []string
	editAdd  []byte

	// req is the request answered (set once by the owner: the conn or
	// the message exchange); compression reads its Compressor and
	// Accept-Encoding (encode.go).
	req *Request
	// coding is the compression decision (codingUndecided until made),
	// enc the encoder when codingOn, encs its output sink, spare a
	// second held-body buffer kept for the swap when compression starts.
	coding int8
	enc    BodyEncoder
	encs   encSink
	spare  []byte
	stage  []byte
	// selCT, selLen: the 200's Content-Type and length, for a 304
	// (SetSelected); selSet says they were given.
	selCT  string
	selLen int64
	selSet bool

	// h2 is the HTTP/2 stream the response goes to (nil: HTTP/1.1);
	// commit then sends HEADERS (h2write.go).
	h2 *h2stream
	// h3 is the HTTP/3 stream the response goes to (h3write.go).
	h3 *h3stream

	// rid is the request's ID, sent back in the field ridName (observe.go);
	// a handler's or upstream's field of that name is replaced by it.
	rid     []byte
	ridName string
	// altSvc is the listener's Alt-Svc value (altsvc.go), added at
	// commit as rid is (a Reset keeps it).
	altSvc string
}

var (
	// ErrTooLong is returned by Write beyond a declared Content-Length.
	ErrTooLong = errors.New("server: write beyond declared content-length")
	// ErrAborted is returned by Write after Abort.
	ErrAborted = errors.New("server: response aborted")
)

func (w *ResponseWriter) begin(req *phttp.Request, closeConn bool) {
	w.status, w.hdr, w.body = 0, w.hdr[:0], w.body[:0]
	w.clen, w.written = -1, 0
	w.committed, w.chunked, w.aborted, w.hasDate, w.err = false, false, false, false, nil
	w.trailerOK, w.trailers = false, w.trailers[:0]
	w.resetCode = http2.ErrCodeNo
	w.now = time.Time{}
	w.editDrop, w.editAdd = nil, nil
	w.dropCoding()

	w.rid, w.altSvc = nil, ""
	w.headReq = string(req.Method) == "HEAD"
	w.http10 = req.Version == phttp.HTTP10
	w.keepAlive = w.http10 && !req.Close
	w.closeConn = closeConn
}

func (w *ResponseWriter) release() {
	if cap(w.body) > maxPooledBuf {
		w.body = nil
	}
	if cap(w.hdr) > maxPooledBuf {
		w.hdr = nil
	}
	if cap(w.trailers) > maxPooledBuf {
		w.trailers = nil
	}
	if cap(w.spare) > maxPooledBuf {
		w.spare = nil
	}
	w.dropCoding()
}

// AddHeader adds a field line. Bytes that would break the framing (CR, LF,
// NUL) are replaced by spaces, as net/http does; a name that is not an
// RFC 9110 token is dropped. Content-Length sets the declared length (as
// SetContentLength), Connection: close closes the connection after the
// response, Transfer-Encoding and other Connection values are ignored:
// the server frames the response itself.
func (w *ResponseWriter) AddHeader(name, value string) {
	w.addHeader(name, value)
}

// AddHeaderBytes is AddHeader for byte slices (views into a parsed message,
// as a proxy forwards them); it does not allocate.
func (w *ResponseWriter) AddHeaderBytes(name, value []byte) {
	w.addHeader(bytesView(name), bytesView(value))
}

func (w *ResponseWriter) addHeader(name, value string) {
	if w.committed || !ascii.IsToken(name) || len(w.rid) > 0 && ascii.EqualFold(name, w.ridName) {
		return
	}
	switch {
	case ascii.EqualFold(name, "Content-Length"):
		if n, err := strconv.ParseInt(value, 10, 64); err == nil && n >= 0 {
			w.clen = n
		}
		return
	case ascii.EqualFold(name, "Transfer-Encoding"):
		return
	case ascii.EqualFold(name, "Date"):
		w.hasDate = true
	case ascii.EqualFold(name, "Connection"):
		if containsToken(value, "close") {
			w.closeConn = true
		}
		return
	}
	w.hdr = append(w.hdr, name...)
	w.hdr = append(w.hdr, ": "...)
	start := len(w.hdr)
	w.hdr = append(w.hdr, value...)
	for i := start; i < len(w.hdr); i++ {
		if c := w.hdr[i]; c == '\r' || c == '\n' || c == 0 {
			w.hdr[i] = ' '
		}
	}
	w.hdr = append(w.hdr, "\r\n"...)
}

// SetContentLength declares the body length, so a body longer than the
// buffer streams without chunked framing (a proxy forwarding an upstream's
// Content-Length). Writing more is an error; writing less closes the
// connection after the response, as the client cannot tell otherwise.
func (w *ResponseWriter) SetContentLength(n int64) {
	if !w.committed && n >= 0 {
		w.clen = n
	}
}

// WriteHeader sets the status code (200-999; anything else becomes 500).
// Only the first call counts, and only before the head is sent.
func (w *ResponseWriter) WriteHeader(status int) {
	if w.status != 0 || w.committed {
		return
	}
	if status < 200 || status > 999 {
		status = 500
	}
	w.status = status
}

// Status is the status code set so far (0 if none).
func (w *ResponseWriter) Status() int { return w.status }

// Written is the number of body bytes written so far.
func (w *ResponseWriter) Written() int64 { return w.written }

// Committed reports that the head has been sent: status and headers can no
// longer change.
func (w *ResponseWriter) Committed() bool { return w.committed }

// SetClose makes the connection close after this response.
func (w *ResponseWriter) SetClose() { w.closeConn = true }

// Reset discards the status, headers and body written so far, if the head
// has not been sent, and reports whether it could: a proxy whose upstream
// failed before anything reached the client answers 502 instead.
func (w *ResponseWriter) Reset() bool {
	if w.committed || w.aborted {
		return false
	}
	w.status, w.hdr, w.body, w.clen, w.written, w.hasDate = 0, w.hdr[:0], w.body[:0], -1, 0, false
	w.trailerOK, w.trailers = false, w.trailers[:0]
	w.dropCoding()
	return true
}

// Abort ends the response without completing its framing and closes the
// connection, so the client sees a truncated message (an upstream that
// died mid-body). Bytes already written are sent first.
func (w *ResponseWriter) Abort() {
	w.aborted, w.closeConn = true, true
}

func (w *ResponseWriter) bodyAllowed() bool {
	return !w.headReq && w.status != 204 && w.status != 304
}

// WriteString is Write for a string.
func (w *ResponseWriter) WriteString(s string) (int, error) {
	return w.write(s)
}

// Write appends body bytes. It copies p.
func (w *ResponseWriter) Write(p []byte) (int, error) {
	return w.write(bytesView(p))
}

func (w *ResponseWriter) write(p string) (int, error) {
	if w.aborted {
		return 0, ErrAborted
	}
	if w.err != nil {
		return 0, w.err
	}
	if w.status == 0 {
		w.status = 200
	}
	if !w.bodyAllowed() {
		w.written += int64(len(p))
		return len(p), nil
	}
	if w.clen >= 0 && w.written+int64(len(p)) > w.clen {
		return 0, ErrTooLong
	}
	w.written += int64(len(p))
	if w.coding == codingUndecided && w.req != nil && w.req.comp != nil && !w.committed &&
		(w.clen >= 0 || w.written >= min(w.req.comp.MinLength(), streamThreshold)) {
		w.decide(false)
	}
	if w.enc != nil {
		w.encWrite(p)
		return len(p), w.err
	}
	return w.writeRaw(p)
}

// writeRaw frames body bytes as they go out (after the encoder, if any).
func (w *ResponseWriter) writeRaw(p string) (int, error) {
	if !w.committed {
		if len(w.body)+len(p) <= streamThreshold {
			w.body = append(w.body, p...)
			return len(p), nil
		}
		w.commit(false)
	}
	w.appendBody(p)
	if len(*w.out) >= flushThreshold {
		if err := w.sink.flushOut(false); err != nil {
			w.err = err
			return len(p), err
		}
	}
	return len(p), nil
}

// appendBody frames p on the committed response.
func (w *ResponseWriter) appendBody(p string) {
	if len(p) == 0 {
		return
	}
	out := *w.out
	if w.chunked {
		out = strconv.AppendInt(out, int64(len(p)), 16)
		out = append(out, "\r\n"...)
		out = append(out, p...)
		out = append(out, "\r\n"...)
	} else {
		out = append(out, p...)
	}
	*w.out = out
}

// Flush sends the head and the body written so far (chunked unless a
// length was declared), for handlers that stream.
func (w *ResponseWriter) Flush() error {
	if w.aborted {
		return ErrAborted
	}
	if w.err != nil {
		return w.err
	}
	if w.status == 0 {
		w.status = 200
	}
	if w.coding == codingUndecided && !w.committed {
		w.decide(true)
	}
	if w.enc != nil {
		w.enc.Flush()
	}
	if !w.committed {
		w.commit(false)
	}
	if err := w.sink.flushOut(false); err != nil {
		w.err = err
		return err
	}
	return nil
}

// commit writes the head into out, followed by the held body. final
// reports that the handler has returned, so the held body is all of it.
func (w *ResponseWriter) commit(final bool) {
	if w.h2 != nil {
		w.commitH2(final)
		return
	}
	if w.h3 != nil {
		w.commitH3(final)
		return
	}
	w.committed = true
	out := appendStatusLine(*w.out, w.status)
	if !w.hasDate {
		now := w.now
		if now.IsZero() {
			now = time.Now()
		}
		out = append(out, dateLine(now)...)
	}
	if w.editDrop != nil || w.editAdd != nil {
		w.applyEdit()
	}
	out = append(out, w.hdr...)
	if len(w.rid) > 0 {
		out = append(out, w.ridName...)
		out = append(out, ": "...)
		out = append(out, w.rid...)
		out = append(out, "\r\n"...)
	}
	if w.altSvc != "" {
		out = append(out, "Alt-Svc: "...)
		out = append(out, w.altSvc...)
		out = append(out, "\r\n"...)
	}
	switch {
	case w.status == 204 || w.status == 304:
		// No framing fields: these responses never have a body
		// (RFC 9110 §15.3.5, §15.4.5).
	case w.coding == codingHead:
		// A compressed GET would have had no known length.
	case w.coding == codingOn && final:
		out = appendContentLength(out, int64(len(w.body)))
	case w.coding == codingOn && !w.http10:
		w.chunked = true
		out = append(out, "Transfer-Encoding: chunked\r\n"...)
	case w.coding == codingOn:
		w.closeConn = true
	case w.headReq:
		// HEAD: the length the GET would have had, when known.
		if w.clen >= 0 {
			out = appendContentLength(out, w.clen)
		} else if final {
			out = appendContentLength(out, w.written)
		}
	case w.clen >= 0:
		out = appendContentLength(out, w.clen)
	case w.trailerOK:
		w.chunked = true // EnableTrailers: chunked, to carry them
		out = append(out, "Transfer-Encoding: chunked\r\n"...)
	case final:
		out = appendContentLength(out, int64(len(w.body)))
	case !w.http10:
		w.chunked = true
		out = append(out, "Transfer-Encoding: chunked\r\n"...)
	default:
		// An HTTP/1.0 client gets a body delimited by closing.
		w.closeConn = true
	}
	switch {
	case w.closeConn && !w.http10:
		out = append(out, "Connection: close\r\n"...)
	case !w.closeConn && w.keepAlive:
		out = append(out, "Connection: keep-alive\r\n"...)
	}
	out = append(out, "\r\n"...)
	*w.out = out
	body := w.body
	w.body = w.body[:0]
	w.appendBody(bytesView(body))
}

// finish completes the response after the handler returned.
func (w *ResponseWriter) finish() {
	if w.aborted {
		w.closeConn = true
		w.dropCoding()
		w.sink.flushOut(false)
		return
	}
	if w.status == 0 {
		w.status = 200
	}
	if w.coding == codingUndecided && !w.committed {
		w.decide(false)
	}
	w.endCoding()
	if !w.committed {
		w.commit(true) // chunked only with trailers (EnableTrailers)
	}
	if w.chunked {
		*w.out = w.appendLastChunk(*w.out)
	}
	if w.clen >= 0 && w.written != w.clen && w.bodyAllowed() {
		// Short body: the client would wait for the rest.
		w.closeConn = true
	}
	if err := w.sink.flushOut(true); err != nil {
		w.closeConn = true
	}
}

func appendContentLength(out []byte, n int64) []byte {
	out = append(out, "Content-Length: "...)
	out = strconv.AppendInt(out, n, 10)
	return append(out, "\r\n"...)
}

// Status lines for every code, built once (RFC 9112 §4: a server sends
// its own highest version, HTTP/1.1, whatever the request's).
const (
	minStatus = 100
	maxStatus = 999
)

var statusLines = func() []string {
	t := make([]string, maxStatus+1)
	for code := minStatus; code <= maxStatus; code++ {
		t[code] = "HTTP/1.1 " + strconv.Itoa(code) + " " + http.StatusText(code) + "\r\n"
	}
	return t
}()

func appendStatusLine(out []byte, status int) []byte {
	return append(out, statusLines[status]...)
}

// dateLine returns the Date field (RFC 9110 §6.6.1) for now, formatted
// once per second and shared by all connections.
type dateCache struct {
	sec  int64
	line []byte
}

var curDate atomic.Pointer[dateCache]

func dateLine(now time.Time) []byte {
	sec := now.Unix()
	if d := curDate.Load(); d != nil && d.sec == sec {
		return d.line
	}
	line := now.UTC().AppendFormat([]byte("Date: "), http.TimeFormat)
	d := &dateCache{sec: sec, line: append(line, "\r\n"...)}
	curDate.Store(d)
	return d.line
}

// appendErrorResponse appends a complete response for input rejected
// before any handler ran: the status, a short text body, and
// "Connection: close", since the stream cannot be trusted after it.
func appendErrorResponse(out []byte, status int) []byte {
	if status < minStatus || status > maxStatus {
		status = 500
	}
	text := http.StatusText(status)
	out = appendStatusLine(out, status)
	out = append(out, dateLine(time.Now())...)
	out = append(out, "Content-Type: text/plain; charset=utf-8\r\nConnection: close\r\n"...)
	out = appendContentLength(out, int64(len(text)+1))
	out = append(out, "\r\n"...)
	out = append(out, text...)
	return append(out, '\n')
}

// containsToken reports whether the comma-separated list v has token t
// (ASCII case-insensitive), as in Connection: keep-alive, close.
func containsToken(v, t string) bool {
	for len(v) > 0 {
		i := 0
		for i < len(v) && v[i] != ',' {
			i++
		}
		item := ascii.TrimOWS(v[:i])
		if ascii.EqualFold(item, t) {
			return true
		}
		if i == len(v) {
			break
		}
		v = v[i+1:]
	}
	return false
}
