package rls

import (
	"errors"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/simdedge/simdedge/server/rewrite"
)

// Entry is one key/value pair of a descriptor; the value is a template.
type Entry struct {
	Key   string
	Value rewrite.Template
}

// Descriptor is a list of entries, matched by the service against its
// configuration for the domain (github.com/envoyproxy/ratelimit's
// descriptors tree).
type Descriptor []Entry

// FailureMode says what happens when the service cannot answer.
type FailureMode string

const (
	// FailAllow admits the request (the limit is not enforced while
	// the service is down).
	FailAllow FailureMode = "allow"
	// FailDeny refuses it with StatusOnError.
	FailDeny FailureMode = "deny"
)

// Options configure a Client.
type Options struct {
	// Address is the service's gRPC address, host:port (plaintext).
	Address string
	// Domain is the service's configuration domain.
	Domain      string
	Descriptors []Descriptor
	// FailureMode: FailAllow when empty.
	FailureMode FailureMode
	// Timeout bounds one call (DefaultTimeout when 0).
	Timeout time.Duration
	Logger  *slog.Logger
}

// Defaults and limits.
const (
	// DefaultTimeout is Envoy's rate-limit filter default: the call sits
	// on every limited request's path, so it is short.
	DefaultTimeout = 20 * time.Millisecond
	// StatusOnError answers a request under FailDeny when the service
	// failed (Envoy's status_on_error default).
	StatusOnError = 500
	// StatusOverLimit answers a request over a limit.
	StatusOverLimit = 429
	// MaxDescriptors and MaxEntries bound what one request sends.
	MaxDescriptors = 16
	MaxEntries     = 16
	// MaxValueLen bounds an expanded value: a longer one (a long path)
	// is cut, so a client cannot make the service store huge keys.
	MaxValueLen = 1024
)

// Errors of New and of the configuration.
var (
	ErrNeedsFleet  = errors.New("rls: rate_limit.service needs a simdedge built with -tags fleet")
	ErrAddress     = errors.New("rls: service address must be host:port")
	ErrDomain      = errors.New("rls: domain is empty")
	ErrDescriptors = errors.New("rls: a service needs 1-16 descriptors of 1-16 entries with non-empty keys")
	ErrFailureMode = errors.New("rls: failure_mode must be allow or deny")
)

// check validates o (defaults filled by withDefaults).
func (o *Options) check() error {
	switch {
	case o.Domain == "":
		return ErrDomain
	case len(o.Descriptors) == 0 || len(o.Descriptors) > MaxDescriptors:
		return ErrDescriptors
	case o.FailureMode != FailAllow && o.FailureMode != FailDeny:
		return ErrFailureMode
	}
	for _, d := range o.Descriptors {
		if len(d) == 0 || len(d) > MaxEntries {
			return ErrDescriptors
		}
		for _, e := range d {
			if e.Key == "" {
				return ErrDescriptors
			}
		}
	}
	return nil
}

func (o Options) withDefaults() Options {
	if o.FailureMode == "" {
		o.FailureMode = FailAllow
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// Value is one expanded entry.
type Value struct{ Key, Value string }

// Expand returns the descriptors for env. A descriptor one of whose
// values expands empty is left out (Envoy leaves out a descriptor whose
// action finds nothing, such as a missing header), so that an empty key
// never merges unrelated requests into one counter. Values are cut to
// MaxValueLen, and bytes that are not UTF-8 (a path may hold obs-text)
// become U+FFFD: protobuf strings must be UTF-8.
func Expand(ds []Descriptor, env *rewrite.Env) [][]Value {
	var out [][]Value
	var buf []byte
	for _, d := range ds {
		vals := make([]Value, 0, len(d))
		for _, e := range d {
			buf = e.Value.Append(buf[:0], env)
			if len(buf) == 0 {
				vals = nil
				break
			}
			vals = append(vals, Value{Key: e.Key, Value: clean(buf)})
		}
		if vals != nil {
			out = append(out, vals)
		}
	}
	return out
}

// clean makes b a UTF-8 string of at most MaxValueLen bytes, cut at a
// rune boundary.
func clean(b []byte) string {
	s := string(b[:min(len(b), 4*MaxValueLen)])
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if len(s) <= MaxValueLen {
		return s
	}
	n := MaxValueLen
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
