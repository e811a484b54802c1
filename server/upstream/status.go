package upstream

import (
	"errors"
	"strconv"
	"strings"
)

// Status codes a StatusSet can hold (RFC 9110 §15: three digits, 1xx-5xx).
const (
	minStatus = 100
	maxStatus = 599
)

// StatusSet is a set of HTTP status codes, as written in `expect`
// ("200-399", "200,204") and retry conditions. The zero value is empty.
type StatusSet struct {
	bits [(maxStatus - minStatus + 64) / 64]uint64
}

// ErrStatusSet is ParseStatusSet's error.
var ErrStatusSet = errors.New(`upstream: status set must be codes or ranges of 100-599, comma-separated ("200-399", "200,204")`)

// ParseStatusSet parses comma-separated codes and ranges ("200-299,304").
func ParseStatusSet(s string) (StatusSet, error) {
	var set StatusSet
	if strings.TrimSpace(s) == "" {
		return set, ErrStatusSet
	}
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err1 := strconv.Atoi(strings.TrimSpace(lo))
		b, err2 := a, error(nil)
		if isRange {
			b, err2 = strconv.Atoi(strings.TrimSpace(hi))
		}
		if err1 != nil || err2 != nil || a < minStatus || b > maxStatus || a > b {
			return StatusSet{}, ErrStatusSet
		}
		set.AddRange(a, b)
	}
	return set, nil
}

// MustStatusSet is ParseStatusSet for constants; it panics on an error.
func MustStatusSet(s string) StatusSet {
	set, err := ParseStatusSet(s)
	if err != nil {
		panic(err)
	}
	return set
}

// AddRange adds the codes lo..hi (clamped to 100-599).
func (s *StatusSet) AddRange(lo, hi int) {
	for c := max(lo, minStatus); c <= min(hi, maxStatus); c++ {
		i := c - minStatus
		s.bits[i/64] |= 1 << (i % 64)
	}
}

// Has reports whether code is in the set.
func (s *StatusSet) Has(code int) bool {
	if code < minStatus || code > maxStatus {
		return false
	}
	i := code - minStatus
	return s.bits[i/64]&(1<<(i%64)) != 0
}

// IsZero reports whether the set is empty.
func (s *StatusSet) IsZero() bool { return s.bits == [len(s.bits)]uint64{} }
