package url

import (
	"iter"
	"slices"
	"strings"
	"unicode/utf8"
)

// SearchParams is a list of name-value pairs in the
// application/x-www-form-urlencoded format (URL Standard §5), the
// URLSearchParams of browsers. Names and values are stored decoded.
//
// A SearchParams is independent of any URL: read one with
// ParseSearchParams(u.Search()) and write it back with
// u.SetSearch(p.String()).
type SearchParams struct {
	list []param
}

type param struct{ name, value string }

// ParseSearchParams parses an application/x-www-form-urlencoded string
// (§5.1); a leading '?' is ignored, as URLSearchParams does.
func ParseSearchParams(s string) *SearchParams {
	p := &SearchParams{}
	p.parse(strings.TrimPrefix(s, "?"))
	return p
}

// parse is the application/x-www-form-urlencoded parser (§5.1).
func (p *SearchParams) parse(s string) {
	for s != "" {
		var seq string
		if i := strings.IndexByte(s, '&'); i >= 0 {
			seq, s = s[:i], s[i+1:]
		} else {
			seq, s = s, ""
		}
		if seq == "" {
			continue
		}
		name, value := seq, ""
		if i := strings.IndexByte(seq, '='); i >= 0 {
			name, value = seq[:i], seq[i+1:]
		}
		p.list = append(p.list, param{formDecode(name), formDecode(value)})
	}
}

// formDecode replaces '+' by space, percent-decodes, and decodes the bytes
// as UTF-8 with replacement (§5.1 steps 3.4-3.5).
func formDecode(s string) string {
	if strings.IndexByte(s, '+') < 0 && strings.IndexByte(s, '%') < 0 && utf8.ValidString(s) {
		return s
	}
	b := appendDecoded(nil, strings.ReplaceAll(s, "+", " "))
	return string(appendUTF8Replacing(nil, bytesString(b)))
}

// appendUTF8Replacing appends s with each maximal invalid UTF-8 subpart
// replaced by U+FFFD, as the Encoding Standard's UTF-8 decoder does (Go's
// strings.ToValidUTF8 replaces whole runs instead).
func appendUTF8Replacing(dst []byte, s string) []byte {
	const replacement = "\uFFFD"
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			dst = append(dst, c)
			i++
			continue
		}
		need := 0
		lo, hi := byte(0x80), byte(0xBF) // continuation byte range
		switch {
		case c >= 0xC2 && c <= 0xDF:
			need = 1
		case c >= 0xE0 && c <= 0xEF:
			need = 2
			if c == 0xE0 {
				lo = 0xA0 // no overlong 3-byte forms
			} else if c == 0xED {
				hi = 0x9F // no surrogates
			}
		case c >= 0xF0 && c <= 0xF4:
			need = 3
			if c == 0xF0 {
				lo = 0x90 // no overlong 4-byte forms
			} else if c == 0xF4 {
				hi = 0x8F // nothing above U+10FFFF
			}
		default:
			dst = append(dst, replacement...)
			i++
			continue
		}
		j := i + 1
		ok := true
		for range need {
			if j >= len(s) || s[j] < lo || s[j] > hi {
				ok = false
				break
			}
			lo, hi = 0x80, 0xBF
			j++
		}
		if ok {
			dst = append(dst, s[i:j]...)
		} else {
			// The bytes read so far become one U+FFFD; the offending
			// byte is read again as the start of the next sequence.
			dst = append(dst, replacement...)
		}
		i = j
	}
	return dst
}

// Len returns the number of pairs.
func (p *SearchParams) Len() int { return len(p.list) }

// Get returns the first value for name and whether there is one.
func (p *SearchParams) Get(name string) (string, bool) {
	for _, kv := range p.list {
		if kv.name == name {
			return kv.value, true
		}
	}
	return "", false
}

// GetAll returns every value for name, in order.
func (p *SearchParams) GetAll(name string) []string {
	var vs []string
	for _, kv := range p.list {
		if kv.name == name {
			vs = append(vs, kv.value)
		}
	}
	return vs
}

// Has reports whether a pair with name exists.
func (p *SearchParams) Has(name string) bool {
	_, ok := p.Get(name)
	return ok
}

// HasValue reports whether the pair name=value exists.
func (p *SearchParams) HasValue(name, value string) bool {
	return slices.Contains(p.list, param{name, value})
}

// Append adds the pair name=value at the end.
func (p *SearchParams) Append(name, value string) {
	p.list = append(p.list, param{name, value})
}

// Set replaces the first pair named name by name=value and removes the
// others, or appends the pair when there is none.
func (p *SearchParams) Set(name, value string) {
	found := false
	p.list = slices.DeleteFunc(p.list, func(kv param) bool {
		if kv.name != name {
			return false
		}
		if found {
			return true
		}
		found = true
		return false
	})
	for i := range p.list {
		if p.list[i].name == name {
			p.list[i].value = value
			return
		}
	}
	p.list = append(p.list, param{name, value})
}

// Delete removes every pair named name.
func (p *SearchParams) Delete(name string) {
	p.list = slices.DeleteFunc(p.list, func(kv param) bool { return kv.name == name })
}

// DeleteValue removes every pair name=value.
func (p *SearchParams) DeleteValue(name, value string) {
	p.list = slices.DeleteFunc(p.list, func(kv param) bool { return kv.name == name && kv.value == value })
}

// Sort sorts the pairs by name, stably, comparing names as sequences of
// UTF-16 code units as the standard requires.
func (p *SearchParams) Sort() {
	slices.SortStableFunc(p.list, func(a, b param) int { return compareUTF16(a.name, b.name) })
}

// All iterates over the pairs in order.
func (p *SearchParams) All() iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		for _, kv := range p.list {
			if !yield(kv.name, kv.value) {
				return
			}
		}
	}
}

// Keys iterates over the names in order.
func (p *SearchParams) Keys() iter.Seq[string] {
	return func(yield func(string) bool) {
		for _, kv := range p.list {
			if !yield(kv.name) {
				return
			}
		}
	}
}

// Values iterates over the values in order.
func (p *SearchParams) Values() iter.Seq[string] {
	return func(yield func(string) bool) {
		for _, kv := range p.list {
			if !yield(kv.value) {
				return
			}
		}
	}
}

// String is the application/x-www-form-urlencoded serializer (§5.2):
// name=value pairs joined by '&', each percent-encoded with the
// application/x-www-form-urlencoded set and spaces as '+'.
func (p *SearchParams) String() string {
	var b []byte
	for i, kv := range p.list {
		if i > 0 {
			b = append(b, '&')
		}
		b = appendFormEncoded(b, kv.name)
		b = append(b, '=')
		b = appendFormEncoded(b, kv.value)
	}
	return string(b)
}

func appendFormEncoded(dst []byte, s string) []byte {
	start := len(dst)
	for {
		i := strings.IndexByte(s, ' ')
		if i < 0 {
			break
		}
		dst = append(appendEncoded(dst, s[:i], formSet), '+')
		s = s[i+1:]
	}
	_ = start
	return appendEncoded(dst, s, formSet)
}

// compareUTF16 compares a and b by UTF-16 code units: code points above
// U+FFFF (surrogate pairs, 0xD800-0xDBFF leads) sort before U+E000-U+FFFF,
// unlike in a byte-wise UTF-8 comparison.
func compareUTF16(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	for i := 0; i < len(ra) && i < len(rb); i++ {
		ka, kb := utf16Key(ra[i]), utf16Key(rb[i])
		if ka != kb {
			if ka < kb {
				return -1
			}
			return 1
		}
	}
	return len(ra) - len(rb)
}

// utf16Key maps a code point to a value that orders like its first UTF-16
// code unit, with ties among supplementary code points broken by the code
// point itself.
func utf16Key(r rune) uint32 {
	const (
		supplementary = 0x10000
		leadSurrogate = 0xD800
	)
	if r >= supplementary {
		return uint32(leadSurrogate+(r-supplementary)>>10)<<16 | uint32(r&0xFFFF)
	}
	return uint32(r) << 16
}

// SearchParams parses the URL's query into a new SearchParams (the
// searchParams attribute; changes to it do not write back: use
// SetSearch(p.String())).
func (u *URL) SearchParams() *SearchParams {
	q, _ := u.Query()
	p := &SearchParams{}
	p.parse(q)
	return p
}
