package files

import (
	"net/http"
	"strconv"
	"time"

	"github.com/simdedge/simdedge/internal/ascii"
)

// etag appends the file's strong entity tag: modification time (ns) and
// size in hex, as nginx builds its own from mtime and size. A file
// replaced within the same nanosecond by one of the same size keeps its
// tag; file systems with coarse timestamps make that likelier, which is
// the price of not hashing the content.
func etag(b []byte, mtime time.Time, size int64) []byte {
	b = append(b, '"')
	b = strconv.AppendInt(b, mtime.UnixNano(), 16)
	b = append(b, '-')
	b = strconv.AppendInt(b, size, 16)
	return append(b, '"')
}

// outcome of the preconditions (RFC 9110 §13.2.2).
const (
	condPass = iota
	condNotModified
	condFailed
)

// evaluate runs the preconditions in §13.2.2's order for a GET or HEAD of
// a file with tag and mtime. get reads a request field.
func evaluate(get func(string) ([]byte, bool), tag []byte, mtime time.Time) int {
	mod := mtime.Truncate(time.Second) // HTTP dates have whole seconds
	if v, ok := get("If-Match"); ok {
		if !matchList(v, tag, false) {
			return condFailed
		}
	} else if v, ok := get("If-Unmodified-Since"); ok {
		if t, err := http.ParseTime(string(v)); err == nil && mod.After(t) {
			return condFailed
		}
	}
	if v, ok := get("If-None-Match"); ok {
		if matchList(v, tag, true) {
			return condNotModified
		}
	} else if v, ok := get("If-Modified-Since"); ok {
		if t, err := http.ParseTime(string(v)); err == nil && !mod.After(t) {
			return condNotModified
		}
	}
	return condPass
}

// matchList reports whether the entity-tag list v ("*" or a comma list)
// matches tag, weakly (W/ ignored on both sides, §8.8.3.2) or strongly
// (a weak tag never matches).
func matchList(v, tag []byte, weak bool) bool {
	v = ascii.TrimOWS(v)
	if string(v) == "*" {
		return true
	}
	for len(v) > 0 {
		v = ascii.TrimOWS(v)
		isWeak := false
		if len(v) >= 2 && v[0] == 'W' && v[1] == '/' {
			isWeak, v = true, v[2:]
		}
		if len(v) == 0 || v[0] != '"' {
			return false // malformed: nothing matches
		}
		end := 1
		for end < len(v) && v[end] != '"' {
			end++
		}
		if end == len(v) {
			return false
		}
		t := v[:end+1]
		if (weak || !isWeak) && string(t) == string(tag) {
			return true
		}
		v = ascii.TrimOWS(v[end+1:])
		if len(v) > 0 {
			if v[0] != ',' {
				return false
			}
			v = v[1:]
		}
	}
	return false
}

// ifRangeHolds reports whether a Range may be honoured given If-Range
// (§13.1.5): absent, or a strong match of the tag, or exactly the
// Last-Modified date.
func ifRangeHolds(get func(string) ([]byte, bool), tag []byte, mtime time.Time) bool {
	v, ok := get("If-Range")
	if !ok {
		return true
	}
	v = ascii.TrimOWS(v)
	if len(v) > 0 && (v[0] == '"' || v[0] == 'W') {
		return len(v) > 0 && v[0] == '"' && string(v) == string(tag)
	}
	t, err := http.ParseTime(string(v))
	return err == nil && t.Equal(mtime.Truncate(time.Second))
}
