package http

import (
	"bytes"
	"encoding/binary"

	"github.com/simdedge/simdedge/asm"
)

// Version is an HTTP/1.x protocol version.
type Version uint8

const (
	HTTP10 Version = 10 // HTTP/1.0
	HTTP11 Version = 11 // HTTP/1.1
)

func (v Version) String() string {
	switch v {
	case HTTP10:
		return "HTTP/1.0"
	case HTTP11:
		return "HTTP/1.1"
	}
	return "HTTP/?"
}

// Request is a parsed request head.
//
// Every []byte field is a view into the buffer given to ParseRequest: no
// bytes are copied. The views are valid only while the caller keeps that
// buffer unchanged; a server recycles the buffer once the handler returns,
// so anything kept longer must be copied (Clone). A Request is reused by
// passing it to ParseRequest again, which keeps the Headers backing array,
// so parsing allocates nothing once the array has grown to the number of
// fields a connection sends.
type Request struct {
	Method  []byte
	Target  []byte
	Version Version
	Headers Headers

	// Host is the value of the Host field, nil if absent. An HTTP/1.1
	// request always has exactly one (RFC 9112 §3.2).
	Host []byte

	// Body says how the body is framed. ContentLength is the value of
	// Content-Length, or -1 when the field is absent.
	Body          BodyKind
	ContentLength int64

	// Close reports that the connection must close after this exchange:
	// Connection: close, or HTTP/1.0 without keep-alive (RFC 9112 §9.3).
	Close bool
	// Expect100 reports "Expect: 100-continue" on an HTTP/1.1 request
	// (RFC 9110 §10.1.1; HTTP/1.0 clients cannot expect it).
	Expect100 bool
	// Upgrade is the Upgrade field's value when the Connection field
	// lists "upgrade" (RFC 9110 §7.8), else nil.
	Upgrade []byte

	// raw is the head the views point into (buf[:n]).
	raw []byte

	// urlBuf is ResolveTarget's scratch buffer for the reconstructed URI.
	urlBuf []byte

	// scan is the walker's scratch space (mask window). It lives here
	// rather than on the stack because asm.Classify's destination
	// escapes, and a reused Request makes it free.
	scan scanner
}

// Reset clears r for reuse, keeping the Headers backing array.
func (r *Request) Reset() {
	h := r.Headers[:0]
	r.Method, r.Target, r.Version, r.Headers, r.Host, r.raw = nil, nil, 0, h, nil, nil
	r.Body, r.ContentLength, r.Close, r.Expect100, r.Upgrade = BodyNone, -1, false, false, nil
}

// ParseRequest parses the request line and field lines at the start of
// buf (RFC 9112 §2-§6) into req and returns the length n of the head,
// including its final empty line; the body, if any, starts at buf[n].
//
// When buf ends before the head does, it returns ErrNeedMore with n == 0:
// nothing was consumed, and the caller calls again with the same bytes and
// more appended. Any other error is final for the connection; StatusFor
// gives the status to answer with. On error req holds partial results.
func (p *Parser) ParseRequest(buf []byte, req *Request) (n int, err error) {
	req.Reset()
	capped := len(buf) >= p.maxHead
	if capped {
		buf = buf[:p.maxHead]
	}
	s := &req.scan
	s.init(buf)

	pos, err := p.requestLine(s, capped, req)
	if err != nil {
		return 0, err
	}
	var f framing
	n, err = p.parseFields(s, pos, capped, &req.Headers, &f)
	if err != nil {
		return 0, err
	}
	if err := req.frame(&f, p.noHostCheck); err != nil {
		return 0, err
	}
	if p.onlyChunked && f.otherCoding {
		return 0, ErrTransferCodingNotImplemented
	}
	req.raw = buf[:n]
	return n, nil
}

// Clone returns a copy of r that owns its bytes: one new buffer holds a
// copy of the head, and every view points into it. Use it to keep a
// request beyond the life of the buffer it was parsed from. Clone of a
// Request that did not parse successfully returns an empty Request.
func (r *Request) Clone() *Request {
	c := &Request{ContentLength: -1}
	if r.raw == nil {
		return c
	}
	raw := append([]byte(nil), r.raw...)
	c.raw = raw
	c.Method, c.Target, c.Host = rebase(raw, r.raw, r.Method), rebase(raw, r.raw, r.Target), rebase(raw, r.raw, r.Host)
	c.Upgrade = rebase(raw, r.raw, r.Upgrade)
	c.Version, c.Body, c.ContentLength, c.Close, c.Expect100 = r.Version, r.Body, r.ContentLength, r.Close, r.Expect100
	c.Headers = make(Headers, len(r.Headers))
	for i, h := range r.Headers {
		c.Headers[i] = Header{Name: rebase(raw, r.raw, h.Name), Value: rebase(raw, r.raw, h.Value)}
	}
	return c
}

// skipEmptyLines steps over CRLFs before a start line: RFC 9112 §2.2 says a
// server SHOULD ignore at least one, since some clients send an extra CRLF
// after a POST body. It returns ErrNeedMore if buf ends in a possible one.
func (p *Parser) skipEmptyLines(buf []byte) (int, error) {
	i := 0
	for i < len(buf) {
		switch buf[i] {
		case '\r':
			if i+1 >= len(buf) {
				return 0, ErrNeedMore
			}
			if buf[i+1] != '\n' {
				return 0, ErrBareCR
			}
			i += 2
		case '\n':
			if !p.bareLF {
				return 0, ErrBareLF
			}
			i++
		default:
			return i, nil
		}
	}
	return i, nil
}

// versionLen is len("HTTP/1.1").
const versionLen = len("HTTP/1.1")

// Versions as little-endian words, so a version compares in one load.
var (
	http11Word = binary.LittleEndian.Uint64([]byte("HTTP/1.1"))
	http10Word = binary.LittleEndian.Uint64([]byte("HTTP/1.0"))
)

// parseVersion parses HTTP-version (RFC 9112 §2.3): "HTTP/" DIGIT "." DIGIT.
// Well-formed versions other than 1.0 and 1.1 (HTTP/0.9, HTTP/1.2,
// HTTP/2.0) are ErrUnsupportedVersion (505); anything else is
// ErrInvalidVersion.
func parseVersion(v []byte) (Version, error) {
	if len(v) != versionLen {
		return 0, ErrInvalidVersion
	}
	switch binary.LittleEndian.Uint64(v) {
	case http11Word:
		return HTTP11, nil
	case http10Word:
		return HTTP10, nil
	}
	if string(v[:5]) == "HTTP/" && isDigit(v[5]) && v[6] == '.' && isDigit(v[7]) {
		return 0, ErrUnsupportedVersion
	}
	return 0, ErrInvalidVersion
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

// requestLine parses request-line = method SP request-target SP
// HTTP-version CRLF (RFC 9112 §3), with exactly one SP between parts, and
// returns the offset of the first field line.
func (p *Parser) requestLine(s *scanner, capped bool, req *Request) (int, error) {
	buf := s.buf
	start, err := p.skipEmptyLines(buf)
	if err != nil {
		if err == ErrNeedMore {
			err = more(capped, ErrHeaderTooLarge)
		}
		return 0, err
	}
	// tooLong reports whether a line starting at start can no longer end
	// within the limit once it reaches offset end.
	tooLong := func(end int) bool { return end-start >= p.maxLine }

	m, ok := s.nonTcharInBlock(start)
	if !ok {
		m = s.nextNonTcharSlow(start)
	}
	if m >= len(buf) {
		if tooLong(len(buf)) {
			return 0, ErrRequestLineTooLong
		}
		return 0, more(capped, ErrHeaderTooLarge)
	}
	if m == start || buf[m] != ' ' {
		return 0, ErrInvalidMethod
	}
	t := m + 1
	c, ok := s.ctlInWindow(t)
	if !ok {
		c = s.nextCtlSlow(c)
	}
	if c >= len(buf) || c+1 >= len(buf) && buf[c] == '\r' {
		if tooLong(len(buf)) {
			return 0, ErrRequestLineTooLong
		}
		// Reject a bad version as soon as it is all there, so that a
		// peer speaking another protocol is not kept waiting for a
		// line end.
		if sp := bytes.IndexByte(buf[t:c], ' '); sp >= 0 && c-(t+sp+1) >= versionLen {
			if _, err := parseVersion(buf[t+sp+1 : t+sp+1+versionLen]); err != nil {
				return 0, err
			}
		}
		return 0, more(capped, ErrHeaderTooLarge)
	}
	next, err := p.lineEnd(buf, c, ErrInvalidRequestLine)
	if err != nil {
		return 0, err
	}
	if tooLong(next - 1) {
		return 0, ErrRequestLineTooLong
	}
	// The version is the line's last 8 bytes, after one SP; the target
	// is everything between the two SPs.
	v := c - versionLen
	if v-1 <= t || buf[v-1] != ' ' {
		if v-1 == t && buf[t] == ' ' {
			return 0, ErrInvalidTarget // empty target
		}
		// Name the part that is wrong: a version of the wrong length
		// after the last SP, or no version at all.
		if bytes.LastIndexByte(buf[t:c], ' ') > 0 {
			return 0, ErrInvalidVersion
		}
		return 0, ErrInvalidRequestLine
	}
	if req.Version, err = parseVersion(buf[v:c]); err != nil {
		return 0, err
	}
	target := buf[t : v-1]
	// The common line, inline: an origin-form target, which every
	// method but CONNECT allows (a method of CONNECT's length takes
	// checkTarget), of targetKernelMin bytes or more, all in '$'..'~',
	// which validTarget's vector scan accepts without its word loop.
	// Anything else takes checkTarget, with the same verdict
	// (TestRequestLineTargetInline); this saves two calls a request.
	if target[0] != '/' || m-start == len("CONNECT") || len(target) < targetKernelMin ||
		asm.Active() == asm.Generic || asm.IndexNotInRange(target, '$', '~') >= 0 {
		if err := checkTarget(buf[start:m], target); err != nil {
			return 0, err
		}
	}
	req.Method = buf[start:m]
	req.Target = target
	return next, nil
}

// CheckRequestLine applies ParseRequest's rules for a request line to a
// method and a target that came some other way, as an HTTP/2 or HTTP/3
// request's :method and :path (or CONNECT's :authority) do: the method is
// a token (RFC 9110 §9.1), the target printable ASCII without SP or "#",
// in a form its method allows (RFC 9112 §3.2). It returns the error
// ParseRequest would return for the line "method SP target SP
// HTTP/1.1" (ErrInvalidMethod, ErrTargetFragment or ErrInvalidTarget), or
// nil. It allocates nothing.
func CheckRequestLine(method, target []byte) error {
	if len(method) == 0 {
		return ErrInvalidMethod
	}
	for _, b := range method {
		if !tcharSet[b] {
			return ErrInvalidMethod
		}
	}
	if len(target) == 0 {
		return ErrInvalidTarget
	}
	return checkTarget(method, target)
}

// checkTarget checks a non-empty target's bytes and form for method.
func checkTarget(method, target []byte) error {
	if !validTarget(target) {
		if bytes.IndexByte(target, '#') >= 0 {
			// RFC 9112 §3.2: the target has no fragment; net/http
			// and llhttp accept one (see nethttp_test.go).
			return ErrTargetFragment
		}
		return ErrInvalidTarget
	}
	if !validTargetForm(method, target) {
		return ErrInvalidTarget
	}
	return nil
}

// validTarget reports whether every byte of a request-target is printable
// ASCII other than SP and "#" (isTargetByte). A second SP (as in
// "GET / x HTTP/1.1") lands here.
//
// With a SIMD level active, a target of targetKernelMin bytes or more takes
// one vector scan for bytes outside '$'..'~': that range leaves out SP and
// "#" as well as the control and non-ASCII bytes, and also "!" and '"',
// which are allowed; at the first of those two the rest goes to the word
// loop, so a target full of them costs one scan more, not one per byte.
// On the 64-byte corpus target the scan costs about a third of the word
// loop (BenchmarkPhases/*/line, AMD EPYC Zen 4, Go 1.26). Shorter
// targets, and the pure-Go build, take the word loop, whose result is the
// same (TestValidTargetPaths).
func validTarget(t []byte) bool {
	if len(t) >= targetKernelMin && asm.Active() != asm.Generic {
		i := asm.IndexNotInRange(t, '$', '~')
		if i < 0 {
			return true
		}
		if b := t[i]; b != '!' && b != '"' {
			return false
		}
		return validTargetWords(t[i+1:])
	}
	return validTargetWords(t)
}

// targetKernelMin is the shortest target validTarget hands to the vector
// scans: below it their two calls cost more than the word loop.
const targetKernelMin = 24

// validTargetWords is validTarget eight bytes at a time.
func validTargetWords(t []byte) bool {
	for len(t) >= 8 {
		if targetLanes(binary.LittleEndian.Uint64(t)) != 0 {
			return false
		}
		t = t[8:]
	}
	for _, b := range t {
		if !targetSet[b] {
			return false
		}
	}
	return true
}

// validTargetForm checks that a (non-empty, printable) target has one of
// the four forms of RFC 9112 §3.2, and the form its method allows:
// authority-form exactly for CONNECT (§3.2.3), asterisk-form only for
// OPTIONS (§3.2.4), otherwise origin-form ("/...") or absolute-form (a
// URI with a scheme, RFC 3986 §3.1). A server must answer anything else
// with 400.
func validTargetForm(method, target []byte) bool {
	switch {
	case string(method) == "CONNECT":
		return ValidHost(target)
	case target[0] == '/':
		return true
	case len(target) == 1 && target[0] == '*':
		return string(method) == "OPTIONS"
	}
	// scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) ":"
	if c := target[0] | 0x20; c < 'a' || c > 'z' {
		return false
	}
	for i := 1; i < len(target); i++ {
		switch c := target[i]; {
		case c == ':':
			return validAuthority(target[:i], target[i+1:])
		case c|0x20 >= 'a' && c|0x20 <= 'z', c >= '0' && c <= '9', c == '+', c == '-', c == '.':
		default:
			return false
		}
	}
	return false
}

// frame applies RFC 9112 §6.3 and §9.3 to a request.
func (r *Request) frame(f *framing, noHostCheck bool) error {
	// RFC 9112 §3.2: exactly one Host in HTTP/1.1, never more than one.
	if f.hosts > 1 && !noHostCheck {
		return ErrMultipleHost
	}
	if f.hosts == 0 && r.Version == HTTP11 && !noHostCheck {
		return ErrMissingHost
	}
	// §3.2 also rejects a Host with an invalid value; empty is valid
	// (a target URI without authority).
	if len(f.host) > 0 && !ValidHost(f.host) {
		return ErrInvalidHost
	}
	r.Host = f.host
	r.ContentLength = -1
	switch {
	case f.teSeen:
		// RFC 9112 §6.1: Transfer-Encoding in HTTP/1.0 means faulty
		// framing; with Content-Length as well it is the classic
		// smuggling shape (§6.3 rule 3 lets a server reject it).
		if r.Version == HTTP10 {
			return ErrTransferEncodingInHTTP10
		}
		if f.clSeen {
			return ErrContentLengthWithTE
		}
		// RFC 9112 §6.1: a coding the server does not know is 501.
		if f.unknownCoding {
			return ErrUnknownTransferCoding
		}
		// §6.3 rule 4: a request whose final coding is not chunked
		// cannot be delimited.
		if !f.chunked || f.chunkedEarly {
			return ErrChunkedNotFinal
		}
		r.Body = BodyChunked
	case f.clSeen:
		r.ContentLength = f.cl
		if f.cl > 0 {
			r.Body = BodyLength
		}
	}
	if f.expectOther {
		// In any version, as net/http's server does: an expectation the
		// server cannot meet is refused, never silently ignored.
		return ErrUnknownExpectation
	}
	if r.Version == HTTP11 {
		r.Close = f.close
		r.Expect100 = f.expect100
	} else {
		r.Close = f.close || !f.keepAlive
	}
	if f.connUpg && f.upgrade != nil {
		r.Upgrade = f.upgrade
	}
	return nil
}
