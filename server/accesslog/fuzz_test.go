package accesslog

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// FuzzJSONLine: whatever bytes a client puts in the fields, the line is
// one valid JSON object on one line, and a field of valid UTF-8 within
// its bound reads back unchanged.
func FuzzJSONLine(f *testing.F) {
	f.Add([]byte("/p?q=1"), []byte("curl/8"))
	f.Add([]byte("/a\"b\\c\n\x00\xff"), []byte("\xe2\x82"))
	f.Fuzz(func(t *testing.T, target, ua []byte) {
		var tc timeCache
		e := sampleEntry()
		e.Target, e.UserAgent = target, ua
		line := appendJSON(nil, e, &tc)
		if len(line) > lineBound(e) {
			t.Fatalf("line of %d bytes over its bound %d", len(line), lineBound(e))
		}
		if bytes.IndexByte(line, '\n') != len(line)-1 {
			t.Fatalf("not one line: %q", line)
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if utf8.Valid(target) && len(target) <= maxTarget && m["path"] != string(target) {
			t.Fatalf("path %q, sent %q", m["path"], target)
		}
		if utf8.Valid(ua) && len(ua) <= maxField && m["user_agent"] != string(ua) {
			t.Fatalf("user_agent %q, sent %q", m["user_agent"], ua)
		}
	})
}

// FuzzCombinedLine: a combined line stays one line with exactly the
// quotes of its format (untrusted quotes are escaped).
func FuzzCombinedLine(f *testing.F) {
	f.Add([]byte("/p"), []byte("ua\"x"))
	f.Fuzz(func(t *testing.T, target, ua []byte) {
		var tc timeCache
		e := sampleEntry()
		e.Target, e.UserAgent = target, ua
		line := appendCombined(nil, e, &tc)
		if len(line) > lineBound(e) {
			t.Fatalf("line of %d bytes over its bound %d", len(line), lineBound(e))
		}
		if bytes.IndexByte(line, '\n') != len(line)-1 {
			t.Fatalf("not one line: %q", line)
		}
		// Unescaped quotes: the request line's two and the two
		// quoted headers' four.
		n := 0
		for i := 0; i < len(line); i++ {
			switch line[i] {
			case '\\':
				i++ // an escape: the next byte is part of it
			case '"':
				n++
			}
		}
		if n != 6 {
			t.Fatalf("%d unescaped quotes in %q", n, line)
		}
	})
}
