package accesslog

import (
	"strconv"
	"time"
	"unicode/utf8"
)

// Format is a line format.
type Format int

const (
	// JSON is one JSON object per line (every untrusted byte escaped,
	// invalid UTF-8 replaced by U+FFFD).
	JSON Format = iota
	// Combined is Apache's combined format: %h %l %u %t "%r" %>s %b
	// "%{Referer}i" "%{User-agent}i", non-printable bytes as \xHH.
	Combined
)

// ParseFormat maps "json" and "combined" to a Format.
func ParseFormat(s string) (Format, bool) {
	switch s {
	case "json":
		return JSON, true
	case "combined":
		return Combined, true
	}
	return 0, false
}

// timeCache holds the formatted second of the last line, so that a shard
// formats the date once per second.
type timeCache struct {
	sec      int64
	json     []byte // "2006-01-02T15:04:05"
	combined []byte // "02/Jan/2006:15:04:05 +0000"
}

func (tc *timeCache) update(t time.Time) {
	sec := t.Unix()
	if sec == tc.sec && len(tc.json) > 0 {
		return
	}
	tc.sec = sec
	u := t.UTC()
	tc.json = u.AppendFormat(tc.json[:0], "2006-01-02T15:04:05")
	tc.combined = u.AppendFormat(tc.combined[:0], "02/Jan/2006:15:04:05 +0000")
}

const hexDigits = "0123456789abcdef"

// appendJSON formats e as one JSON object and a newline.
func appendJSON(b []byte, e *Entry, tc *timeCache) []byte {
	tc.update(e.Time)
	b = append(b, `{"time":"`...)
	b = append(b, tc.json...)
	b = append(b, '.')
	b = appendPadded(b, int64(e.Time.Nanosecond()/int(time.Microsecond)), 6)
	b = append(b, `Z","remote":`...)
	b = appendJSONString(b, e.Remote, maxField)
	b = append(b, `,"method":`...)
	b = appendJSONString(b, e.Method, maxField)
	b = append(b, `,"host":`...)
	b = appendJSONString(b, e.Host, maxField)
	b = append(b, `,"path":`...)
	b = appendJSONString(b, e.Target, maxTarget)
	b = append(b, `,"proto":"`...)
	b = append(b, e.Proto...)
	b = append(b, `","status":`...)
	b = strconv.AppendInt(b, int64(e.Status), 10)
	b = append(b, `,"bytes_in":`...)
	b = strconv.AppendInt(b, e.BytesIn, 10)
	b = append(b, `,"bytes_out":`...)
	b = strconv.AppendInt(b, e.BytesOut, 10)
	b = append(b, `,"duration":`...)
	b = appendSeconds(b, e.Duration)
	b = append(b, `,"route":`...)
	b = appendJSONString(b, bytesOf(e.Route), maxField)
	b = append(b, `,"upstream":`...)
	b = appendJSONString(b, bytesOf(e.Upstream), maxField)
	b = append(b, `,"target":`...)
	b = appendJSONString(b, bytesOf(e.UpstreamTarget), maxField)
	b = append(b, `,"request_id":`...)
	b = appendJSONString(b, e.RequestID, maxField)
	b = append(b, `,"user_agent":`...)
	b = appendJSONString(b, e.UserAgent, maxField)
	b = append(b, `,"tls":"`...)
	b = append(b, e.TLS...)
	return append(b, "\"}\n"...)
}

// appendSeconds writes d in seconds with microsecond precision.
func appendSeconds(b []byte, d time.Duration) []byte {
	if d < 0 {
		d = 0
	}
	us := int64(d / time.Microsecond)
	b = strconv.AppendInt(b, us/1e6, 10)
	b = append(b, '.')
	return appendPadded(b, us%1e6, 6)
}

// appendPadded writes v (0 <= v < 10^width, width even) with leading
// zeros, two digits at a time.
func appendPadded(b []byte, v int64, width int) []byte {
	var d [20]byte
	for i := width - 2; i >= 0; i -= 2 {
		k := 2 * (v % 100)
		d[i], d[i+1] = twoDigits[k], twoDigits[k+1]
		v /= 100
	}
	return append(b, d[:width]...)
}

// twoDigits is "00" through "99".
var twoDigits = func() (t [200]byte) {
	for i := 0; i < 100; i++ {
		t[2*i], t[2*i+1] = byte('0'+i/10), byte('0'+i%10)
	}
	return t
}()

// jsonPlain marks the bytes a JSON string holds as they are: printable
// ASCII other than quote and backslash (RFC 8259 §7). Others go through
// the escape and UTF-8 checks.
var jsonPlain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// appendJSONString writes s quoted, cut at max bytes (a cut ends with
// "..."). Quote, backslash and control bytes are escaped; invalid UTF-8
// becomes U+FFFD, so the line is valid JSON whatever the client sent.
func appendJSONString(b, s []byte, max int) []byte {
	if len(s) <= max {
		// The common case: nothing to escape or cut.
		i := 0
		for i < len(s) && jsonPlain[s[i]] {
			i++
		}
		if i == len(s) {
			b = append(b, '"')
			b = append(b, s...)
			return append(b, '"')
		}
	}
	return appendJSONEscaped(b, s, max)
}

// appendJSONEscaped is appendJSONString's general case.
func appendJSONEscaped(b, s []byte, max int) []byte {
	cut := false
	if len(s) > max {
		s, cut = s[:max], true
	}
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if jsonPlain[c] {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRune(s[i:])
			if r != utf8.RuneError || size != 1 {
				i += size
				continue
			}
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		i++
		start = i
	}
	b = append(b, s[start:]...)
	if cut {
		b = append(b, "..."...)
	}
	return append(b, '"')
}

// appendCombined formats e in Apache's combined format and a newline.
func appendCombined(b []byte, e *Entry, tc *timeCache) []byte {
	tc.update(e.Time)
	b = appendDashed(b, e.Remote, maxField)
	b = append(b, " - - ["...)
	b = append(b, tc.combined...)
	b = append(b, `] "`...)
	b = appendEscaped(b, e.Method, maxField)
	b = append(b, ' ')
	b = appendEscaped(b, e.Target, maxTarget)
	b = append(b, ' ')
	b = append(b, e.Proto...)
	b = append(b, `" `...)
	b = strconv.AppendInt(b, int64(e.Status), 10)
	b = append(b, ' ')
	if e.BytesOut > 0 {
		b = strconv.AppendInt(b, e.BytesOut, 10)
	} else {
		b = append(b, '-') // Apache's %b: "-" for no bytes
	}
	b = append(b, ` "`...)
	b = appendDashed(b, e.Referer, maxField)
	b = append(b, `" "`...)
	b = appendDashed(b, e.UserAgent, maxField)
	return append(b, "\"\n"...)
}

// appendDashed is appendEscaped, or "-" for an empty field (Apache).
func appendDashed(b, s []byte, max int) []byte {
	if len(s) == 0 {
		return append(b, '-')
	}
	return appendEscaped(b, s, max)
}

// appendEscaped writes s for a combined-format line: quote and backslash
// escaped with a backslash, bytes outside printable ASCII as \xHH (what
// Apache and nginx do), so a client cannot forge a line or a field.
func appendEscaped(b, s []byte, max int) []byte {
	cut := false
	if len(s) > max {
		s, cut = s[:max], true
	}
	start := 0
	for i, c := range s {
		if c >= 0x20 && c < 0x7f && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		if c == '"' || c == '\\' {
			b = append(b, '\\', c)
		} else {
			b = append(b, '\\', 'x', hexDigits[c>>4], hexDigits[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	if cut {
		b = append(b, "..."...)
	}
	return b
}
