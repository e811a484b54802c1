package http

// Response is a parsed response head, for a client or a proxy reading from
// an upstream. Its []byte fields are views into the parsed buffer, with the
// same lifetime rules as Request's.
type Response struct {
	Version Version
	Status  int
	// Reason is the reason-phrase, possibly empty; RFC 9112 §4 says a
	// client should ignore it.
	Reason  []byte
	Headers Headers

	// Body says how the body is framed (RFC 9112 §6.3). ContentLength is
	// the value of Content-Length, or -1 when the field is absent.
	Body          BodyKind
	ContentLength int64
	// Close reports that the connection cannot be reused after this
	// response (RFC 9112 §9.3), including when the body runs until close.
	Close bool
	// Upgrade is the Upgrade field's value when Connection lists
	// "upgrade", else nil. With Status 101 the connection switches
	// protocols after the head.
	Upgrade []byte

	scan scanner // see Request.scan
}

// Reset clears r for reuse, keeping the Headers backing array.
func (r *Response) Reset() {
	h := r.Headers[:0]
	r.Version, r.Status, r.Reason, r.Headers = 0, 0, nil, h
	r.Body, r.ContentLength, r.Close, r.Upgrade = BodyNone, -1, false, nil
}

// statusLineMin is len("HTTP/1.1 200").
const statusLineMin = versionLen + len(" 200")

// ParseResponse parses a status line and field lines at the start of buf
// (RFC 9112 §4-§6) into resp, framing the body as for a request other than
// HEAD; use ParseHEADResponse for the answer to a HEAD request. Results
// and errors are as for ParseRequest; the request-line limit applies to
// the status line.
func (p *Parser) ParseResponse(buf []byte, resp *Response) (n int, err error) {
	return p.parseResponse(buf, resp, false)
}

// ParseHEADResponse is ParseResponse for the response to a HEAD request,
// which never has a body whatever its fields say (RFC 9112 §6.3 rule 1).
func (p *Parser) ParseHEADResponse(buf []byte, resp *Response) (n int, err error) {
	return p.parseResponse(buf, resp, true)
}

func (p *Parser) parseResponse(buf []byte, resp *Response, head bool) (int, error) {
	resp.Reset()
	capped := len(buf) >= p.maxHead
	if capped {
		buf = buf[:p.maxHead]
	}
	s := &resp.scan
	s.init(buf)
	pos, err := p.statusLine(s, capped, resp)
	if err != nil {
		return 0, err
	}
	var f framing
	n, err := p.parseFields(s, pos, capped, &resp.Headers, &f)
	if err != nil {
		return 0, err
	}
	if err := resp.frame(&f, head); err != nil {
		return 0, err
	}
	return n, nil
}

// statusLine parses status-line = HTTP-version SP status-code SP
// [ reason-phrase ] CRLF (RFC 9112 §4). The SP before an empty reason is
// optional here: many servers omit it, and RFC 9112 §4 tells clients to
// ignore the reason anyway.
func (p *Parser) statusLine(s *scanner, capped bool, r *Response) (int, error) {
	buf := s.buf
	start, err := p.skipEmptyLines(buf)
	if err != nil {
		if err == ErrNeedMore {
			err = more(capped, ErrHeaderTooLarge)
		}
		return 0, err
	}
	c := s.nextCtl(start)
	for c < len(buf) && buf[c] == '\t' {
		c = s.nextCtl(c + 1) // HTAB is allowed in the reason phrase
	}
	if c >= len(buf) || c+1 >= len(buf) && buf[c] == '\r' {
		// Reject a bad version early, so garbage upstream bytes do not
		// wait for a line end.
		if len(buf)-start >= versionLen {
			if _, err := parseVersion(buf[start : start+versionLen]); err != nil {
				return 0, err
			}
		}
		if len(buf)-start >= p.maxLine {
			return 0, ErrRequestLineTooLong
		}
		return 0, more(capped, ErrHeaderTooLarge)
	}
	next, err := p.lineEnd(buf, c, ErrInvalidReason)
	if err != nil {
		return 0, err
	}
	if next-start > p.maxLine {
		return 0, ErrRequestLineTooLong
	}
	line := buf[start:c]
	if len(line) < statusLineMin {
		if len(line) >= versionLen {
			if _, err := parseVersion(line[:versionLen]); err != nil {
				return 0, err
			}
		}
		return 0, ErrInvalidStatusLine
	}
	if r.Version, err = parseVersion(line[:versionLen]); err != nil {
		return 0, err
	}
	code := line[versionLen+1 : statusLineMin]
	if line[versionLen] != ' ' {
		return 0, ErrInvalidStatusLine
	}
	if !isDigit(code[0]) || !isDigit(code[1]) || !isDigit(code[2]) {
		return 0, ErrInvalidStatus
	}
	r.Status = int(code[0]-'0')*100 + int(code[1]-'0')*10 + int(code[2]-'0')
	// RFC 9110 §15: status codes are 100-599.
	if r.Status < 100 || r.Status > 599 {
		return 0, ErrInvalidStatus
	}
	if rest := line[statusLineMin:]; len(rest) > 0 {
		if rest[0] != ' ' {
			return 0, ErrInvalidStatus
		}
		r.Reason = rest[1:]
	}
	return next, nil
}

// frame applies RFC 9112 §6.3 to a response.
func (r *Response) frame(f *framing, head bool) error {
	r.ContentLength = -1
	if f.clSeen {
		r.ContentLength = f.cl
	}
	// Both fields together are rejected as in requests: a proxy that
	// forwards such a response lets the next hop choose differently.
	if f.teSeen && f.clSeen {
		return ErrContentLengthWithTE
	}
	if f.teSeen && r.Version == HTTP10 {
		return ErrTransferEncodingInHTTP10
	}
	if r.Version == HTTP11 {
		r.Close = f.close
	} else {
		r.Close = f.close || !f.keepAlive
	}
	if f.connUpg && f.upgrade != nil {
		r.Upgrade = f.upgrade
	}
	switch {
	case head, r.Status < 200, r.Status == 204, r.Status == 304:
		// Rule 1: never a body, whatever the fields say.
		r.Body = BodyNone
	case f.teSeen:
		// Rule 4: chunked last means chunked; otherwise the body
		// runs until the connection closes.
		if f.chunked && !f.chunkedEarly {
			r.Body = BodyChunked
		} else {
			r.Body = BodyUntilClose
			r.Close = true
		}
	case f.clSeen:
		// Rule 6.
		if f.cl > 0 {
			r.Body = BodyLength
		}
	default:
		// Rule 8.
		r.Body = BodyUntilClose
		r.Close = true
	}
	return nil
}
