package http

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// llhttpCase is one ```http block of the vendored llhttp corpus with what
// llhttp reports for it.
type llhttpCase struct {
	file, title string
	typ         string // meta "type": request, response, request-lenient-..., ...
	skipBody    bool
	input       []byte
	messages    []llhttpMsg // messages whose head llhttp completed
	errOff      int         // offset of llhttp's error, or -1
	errReason   string
}

type llhttpMsg struct {
	method, url   string
	fields        [][2]string
	status        string
	flags         uint64
	contentLength int64
	headEnd       int // offset of "headers complete"
}

// llhttp's flags (llhttp.h), reported in hex in "headers complete".
const (
	llhttpFlagChunked       = 0x8
	llhttpFlagContentLength = 0x20
	// llhttpFlagNoBody is ours, outside llhttp's flag bits: the head
	// cannot have a body, so the chunked flag is not compared.
	llhttpFlagNoBody = 1 << 32
)

var (
	llhttpMetaRe = regexp.MustCompile(`<!--\s*meta=(\{.*\})\s*-->`)
	llhttpSpanRe = regexp.MustCompile(`^off=(\d+) len=\d+ span\[(\w+)\]="(.*)"$`)
	llhttpHeadRe = regexp.MustCompile(`^off=(\d+) headers complete (?:method=\d+ )?(?:status=\d+ )?v=\d/\d flags=([0-9a-f]+) content_length=(\d+)`)
	llhttpErrRe  = regexp.MustCompile(`^off=(\d+) error code=\d+ reason="(.*)"$`)
)

// llhttpInput turns an ```http block into bytes the way llhttp's md-test
// does: lines end in CRLF, \r \n \t \f \xHH are escapes, and a backslash
// at the end of a line joins it to the next without a line break.
func llhttpInput(lines []string) []byte {
	s := strings.Join(lines, "\r\n")
	s = strings.NewReplacer(`\r`, "\r", `\n`, "\n", `\t`, "\t", `\f`, "\f").Replace(s)
	// md-test builds a JavaScript string and sends it as UTF-8, so \xff
	// arrives as the two bytes of U+00FF.
	s = regexp.MustCompile(`\\x([0-9a-fA-F]{2})`).ReplaceAllStringFunc(s, func(m string) string {
		v, _ := strconv.ParseUint(m[2:], 16, 8)
		return string(rune(v))
	})
	return []byte(strings.ReplaceAll(s, "\\\r\n", ""))
}

// llhttpUnquote undoes the escapes of the log's quoted spans: the same
// control-byte escapes as the input, with quotes and backslashes raw.
func llhttpUnquote(s string) string {
	s = regexp.MustCompile(`\\x([0-9a-fA-F]{2})`).ReplaceAllStringFunc(s, func(m string) string {
		v, _ := strconv.ParseUint(m[2:], 16, 8)
		return string(rune(v))
	})
	return strings.NewReplacer(`\r`, "\r", `\n`, "\n", `\t`, "\t").Replace(s)
}

func loadLLHTTP(t *testing.T) []llhttpCase { return loadLLHTTPCorpus(t) }

func loadLLHTTPCorpus(t testing.TB) []llhttpCase {
	files, err := filepath.Glob(filepath.Join("testdata", "llhttp", "*", "*.md"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no llhttp corpus in testdata/llhttp: %v", err)
	}
	sort.Strings(files)
	var cases []llhttpCase
	for _, file := range files {
		f, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(filepath.Join("testdata", "llhttp"), file)
		var title string
		var cur *llhttpCase
		var block string
		var blockLines []string
		sc := bufio.NewScanner(bytes.NewReader(f))
		for sc.Scan() {
			line := sc.Text()
			if block != "" {
				if line != "```" {
					blockLines = append(blockLines, line)
					continue
				}
				switch {
				case block == "http" && cur != nil:
					cur.input = llhttpInput(blockLines)
				case block == "log" && cur != nil:
					cur.parseLog(blockLines)
					cases = append(cases, *cur)
					cur = nil
				}
				block, blockLines = "", nil
				continue
			}
			switch {
			case strings.HasPrefix(line, "#"):
				title = strings.TrimSpace(strings.TrimLeft(line, "#"))
			case llhttpMetaRe.MatchString(line):
				var meta struct {
					Type     string `json:"type"`
					SkipBody bool   `json:"skipBody"`
				}
				if err := json.Unmarshal([]byte(llhttpMetaRe.FindStringSubmatch(line)[1]), &meta); err != nil {
					t.Fatalf("%s: meta %q: %v", rel, line, err)
				}
				if meta.Type == "" {
					meta.Type = "request"
					if strings.HasPrefix(rel, "response") {
						meta.Type = "response"
					}
				}
				cur = &llhttpCase{file: rel, title: title, typ: meta.Type, skipBody: meta.SkipBody, errOff: -1}
			case strings.HasPrefix(line, "```"):
				block = strings.TrimPrefix(line, "```")
			}
		}
	}
	return cases
}

func (c *llhttpCase) parseLog(lines []string) {
	var m llhttpMsg
	lastSpan := ""
	for _, l := range lines {
		if s := llhttpSpanRe.FindStringSubmatch(l); s != nil {
			v := llhttpUnquote(s[3])
			switch kind := s[2]; kind {
			case "method":
				m.method += v
			case "url":
				m.url += v
			case "status":
				m.status += v
			case "header_field":
				if lastSpan == kind {
					m.fields[len(m.fields)-1][0] += v
				} else {
					m.fields = append(m.fields, [2]string{v, ""})
				}
			case "header_value":
				if len(m.fields) > 0 {
					m.fields[len(m.fields)-1][1] += v
				}
			}
			lastSpan = s[2]
			continue
		}
		lastSpan = ""
		if h := llhttpHeadRe.FindStringSubmatch(l); h != nil {
			m.headEnd, _ = strconv.Atoi(h[1])
			m.flags, _ = strconv.ParseUint(h[2], 16, 64)
			m.contentLength, _ = strconv.ParseInt(h[3], 10, 64)
			c.messages = append(c.messages, m)
			m = llhttpMsg{}
		}
		if e := llhttpErrRe.FindStringSubmatch(l); e != nil {
			c.errOff, _ = strconv.Atoi(e[1])
			c.errReason = e[2]
			break
		}
	}
}

// llhttpOutcome is what our parser made of a case.
type llhttpOutcome struct {
	messages []llhttpMsg
	err      error
	// stop is why a server would stop reading after the last message
	// although bytes remain: "close" or "upgrade" ("" if none).
	stop string
}

// run parses a case the way a server (or a proxy's client side) would:
// head, then body by its framing, then the next pipelined message, until
// the input ends or an error.
func (c *llhttpCase) run(p *Parser) llhttpOutcome {
	var out llhttpOutcome
	buf := c.input
	pos := 0
	response := strings.HasPrefix(c.typ, "response")
	for pos < len(buf) {
		var m llhttpMsg
		var n int
		var err error
		var body BodyKind
		var cl int64
		var closeConn, upgrade, noBodyStatus bool
		if response {
			r := Response{Headers: make(Headers, 0, DefaultMaxHeaders)}
			if c.skipBody {
				n, err = p.ParseHEADResponse(buf[pos:], &r)
			} else {
				n, err = p.ParseResponse(buf[pos:], &r)
			}
			m.status = strconv.Itoa(r.Status)
			for _, h := range r.Headers {
				m.fields = append(m.fields, [2]string{string(h.Name), string(h.Value)})
			}
			body, cl = r.Body, r.ContentLength
			closeConn, upgrade = r.Close, r.Upgrade != nil && r.Status == 101
			noBodyStatus = c.skipBody || r.Status < 200 || r.Status == 204 || r.Status == 304
		} else {
			// Room for every field, so that the fast field walk runs
			// (with none it never does; see headerCaps).
			r := Request{Headers: make(Headers, 0, DefaultMaxHeaders)}
			n, err = p.ParseRequest(buf[pos:], &r)
			m.method, m.url = string(r.Method), string(r.Target)
			for _, h := range r.Headers {
				m.fields = append(m.fields, [2]string{string(h.Name), string(h.Value)})
			}
			body, cl = r.Body, r.ContentLength
			closeConn = r.Close
			upgrade = r.Upgrade != nil || string(r.Method) == "CONNECT"
			if c.skipBody {
				body = BodyNone
			}
		}
		if errors.Is(err, ErrNeedMore) {
			return out
		}
		if err != nil {
			out.err = err
			return out
		}
		m.headEnd = pos + n
		m.contentLength = cl
		if body == BodyChunked {
			m.flags |= llhttpFlagChunked
		}
		if noBodyStatus {
			// RFC 9112 §6.3 rule 1: these responses have no body
			// whatever their fields say. llhttp still reports the
			// chunked flag of such a head, so copy the flag rather than
			// compare it.
			m.flags |= llhttpFlagNoBody
		}
		out.messages = append(out.messages, m)
		pos += n
		switch body {
		case BodyLength:
			if int64(len(buf)-pos) < cl {
				return out
			}
			pos += int(cl)
		case BodyChunked:
			var d ChunkedDecoder
			rest := append([]byte(nil), buf[pos:]...)
			_, consumed, err := d.Decode(rest)
			if errors.Is(err, ErrNeedMore) {
				return out
			}
			if err != nil {
				out.err = err
				return out
			}
			pos += consumed
		case BodyUntilClose:
			return out
		}
		// A server stops parsing after a message that closes the
		// connection or switches protocols; llhttp reports bytes that
		// follow as an error or a pause.
		switch {
		case upgrade:
			out.stop = "upgrade"
			return out
		case closeConn:
			out.stop = "close"
			return out
		}
	}
	return out
}

// llhttpDivergences lists the cases where this package intentionally
// differs from llhttp's strict mode, keyed by "file: title", with the
// reason. The value is the error we return instead ("" when we accept
// what llhttp rejects).
var llhttpDivergences = map[string]struct {
	ours   error
	reason string
}{
	// Methods are tokens (RFC 9110 §9.1); a server answers unknown ones
	// with 501 itself. llhttp knows a fixed list and per-protocol sets.
	"request/invalid.md: HTTP protocol and ANNOUNCE method": {nil, "any token is a method"},
	"request/invalid.md: Invalid method":                    {nil, "any token is a method"},
	// Only HTTP/1.0 and HTTP/1.1 are spoken; llhttp also parses RTSP
	// and ICE, and HTTP/0.9 simple requests and responses.
	"request/method.md: SOURCE request with ICE":    {ErrInvalidVersion, "ICE is not HTTP"},
	"request/method.md: OPTIONS request with RTSP":  {ErrInvalidVersion, "RTSP is not HTTP"},
	"request/method.md: ANNOUNCE request with RTSP": {ErrInvalidVersion, "RTSP is not HTTP"},
	"response/sample.md: RTSP response":             {ErrInvalidVersion, "RTSP is not HTTP"},
	"response/sample.md: ICE response":              {ErrInvalidVersion, "ICE is not HTTP"},
	"response/sample.md: HTTP version 0.9":          {ErrUnsupportedVersion, "HTTP/0.9 is answered with 505"},
	"request/sample.md: No HTTP version":            {ErrInvalidRequestLine, "an HTTP/0.9 simple request has no version"},
	// RFC 9112 §3.2.4: asterisk-form is only for a server-wide OPTIONS.
	// RFC 9110 §4.2.4: a recipient should treat userinfo in an http(s)
	// URI as an error; an authority with userinfo also lets a proxy and
	// its upstream disagree on the host.
	"request/uri.md: `host:port` and basic auth": {ErrInvalidTarget, "userinfo in an absolute-form target"},
	// M-SEARCH * is SSDP, HTTP-like datagrams over UDP, not HTTP/1.1.
	"request/method.md: M-SEARCH request": {ErrInvalidTarget, "asterisk-form only with OPTIONS"},
	// RFC 9112 §3.2: a request-target has no fragment; llhttp reads
	// "#" as the start of one, net/url would keep it in the path. A
	// server answers 400.
	"request/uri.md: Fragment in URI": {ErrTargetFragment, "no fragment in a request-target"},
	"request/transfer-encoding.md: POST with `chunked` as last transfer-encoding": {
		ErrTargetFragment, "no fragment in a request-target"},
	"request/transfer-encoding.md: POST with `chunked` as last transfer-encoding (multiple headers)": {
		ErrTargetFragment, "no fragment in a request-target"},
}

func TestLLHTTPCorpus(t *testing.T) {
	cases := loadLLHTTP(t)
	// The Host rule is checked separately (see Parser.noHostCheck).
	p := NewParser(Options{})
	p.noHostCheck = true
	var pass, lenientSkip, diverge, fail int
	usedDivergence := map[string]bool{}
	for _, c := range cases {
		key := c.file + ": " + c.title
		lenient := strings.Contains(c.typ, "lenient") || strings.HasSuffix(c.typ, "-finish")
		got := c.run(p)
		problem := c.compare(got)
		if d, ok := llhttpDivergences[key]; ok && problem != "" {
			usedDivergence[key] = true
			if !errors.Is(got.err, d.ours) && !(d.ours == nil && got.err == nil) {
				t.Errorf("%s: listed divergence (%s) expects %v, got %v (%s)", key, d.reason, d.ours, got.err, problem)
				fail++
				continue
			}
			diverge++
			continue
		}
		switch {
		case problem == "":
			pass++
		case lenient:
			// Lenient-mode expectations count only where our strict
			// default agrees with them.
			lenientSkip++
		default:
			fail++
			t.Errorf("%s [%s]: %s\ninput %q", key, c.typ, problem, c.input)
		}
	}
	for k := range llhttpDivergences {
		if !usedDivergence[k] {
			t.Errorf("divergence %q no longer diverges (or the case is gone): remove it", k)
		}
	}
	t.Logf("llhttp corpus: %d cases, %d pass, %d intended divergences, %d lenient-only skipped, %d fail",
		len(cases), pass, diverge, lenientSkip, fail)
	if len(cases) < 200 {
		t.Errorf("only %d cases loaded", len(cases))
	}
}

// compare returns "" when our outcome matches llhttp's, else what differs.
func (c *llhttpCase) compare(got llhttpOutcome) string {
	wantErr := c.errOff >= 0
	switch {
	case got.stop == "upgrade" && c.errReason == "Pause on CONNECT/Upgrade",
		got.stop == "close" && c.errReason == "Data after `Connection: close`":
		// The same decision: llhttp pauses or fails where a server
		// using this package stops parsing.
		got.err, wantErr = nil, false
		if len(c.messages) > len(got.messages) {
			return "llhttp completed more heads before stopping"
		}
	case got.stop == "upgrade" && !wantErr:
		// llhttp keeps going after an upgrade it was not asked to
		// pause for (101 responses in some cases); nothing to compare.
	}
	if wantErr != (got.err != nil) {
		return "llhttp error " + strconv.Quote(c.errReason) + ", ours " + errString(got.err)
	}
	// Compare the messages both completed; llhttp may complete a head
	// before failing in its body, and so may we.
	for i, g := range got.messages {
		if i >= len(c.messages) {
			return "we parsed a head llhttp did not complete (message " + strconv.Itoa(i) + ")"
		}
		w := c.messages[i]
		if w.headEnd != g.headEnd {
			return "head end " + strconv.Itoa(g.headEnd) + ", llhttp " + strconv.Itoa(w.headEnd)
		}
		if w.method != g.method || w.url != g.url {
			return "start line " + strconv.Quote(g.method+" "+g.url) + ", llhttp " + strconv.Quote(w.method+" "+w.url)
		}
		if w.status != "" && w.status != g.status && !strings.HasPrefix(w.status, g.status) {
			// llhttp's status span is the reason phrase; ours is the code.
			_ = w
		}
		if len(w.fields) != len(g.fields) {
			return "field count " + strconv.Itoa(len(g.fields)) + ", llhttp " + strconv.Itoa(len(w.fields))
		}
		for j := range w.fields {
			// llhttp keeps trailing whitespace in values; RFC 9112 §5
			// excludes it from the field value, and so do we.
			wv := strings.TrimRight(w.fields[j][1], " \t")
			if w.fields[j][0] != g.fields[j][0] || wv != g.fields[j][1] {
				return "field " + strconv.Quote(g.fields[j][0]+": "+g.fields[j][1]) + ", llhttp " + strconv.Quote(w.fields[j][0]+": "+wv)
			}
		}
		if g.flags&llhttpFlagNoBody == 0 && w.flags&llhttpFlagChunked != g.flags&llhttpFlagChunked {
			return "chunked framing differs"
		}
		if w.flags&llhttpFlagContentLength != 0 && w.contentLength != g.contentLength {
			return "content-length " + strconv.FormatInt(g.contentLength, 10) + ", llhttp " + strconv.FormatInt(w.contentLength, 10)
		}
	}
	if !wantErr && len(got.messages) < len(c.messages) {
		return "llhttp completed " + strconv.Itoa(len(c.messages)) + " heads, we " + strconv.Itoa(len(got.messages))
	}
	return ""
}

func errString(err error) string {
	if err == nil {
		return "none"
	}
	return err.Error()
}
