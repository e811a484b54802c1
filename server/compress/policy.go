package compress

import (
	"errors"
	"strings"
	"sync"

	"github.com/simdedge/simdedge/internal/ascii"
	"github.com/simdedge/simdedge/server"
)

// Options configure a Policy. Zero values take the defaults below, which
// follow Caddy's encode directive.
type Options struct {
	// Encodings in order of preference, used to break ties between
	// codings the client accepts with the same qvalue: "zstd", "br",
	// "gzip". Default DefaultEncodings.
	Encodings []string
	// MinLength: bodies shorter are sent as is. Default
	// DefaultMinLength; at most MaxMinLength.
	MinLength int64
	// Types: media types compressed, exact ("application/json") or a
	// whole top-level type ("text/*"), compared without parameters and
	// case-insensitively. Default DefaultTypes.
	Types []string
	// Levels per coding; a missing one takes its default.
	Levels map[string]int
}

// Defaults. Caddy's encode uses zstd and gzip unless told otherwise, and
// 512 bytes as the minimum; br is opt-in here because its pure-Go encoder
// costs several times gzip's CPU per byte.
var (
	DefaultEncodings = []string{"zstd", "gzip"}
	// DefaultTypes are Caddy's encode defaults: text and the
	// structured text formats sent as application/ or image/ types.
	DefaultTypes = []string{
		"text/*",
		"application/json",
		"application/javascript",
		"application/xhtml+xml",
		"application/atom+xml",
		"application/rss+xml",
		"application/wasm",
		"application/xml",
		"image/svg+xml",
	}
)

// DefaultMinLength is Caddy's: below ~512 bytes the coding's framing
// (gzip's 18-byte header and trailer) and the CPU are not worth it.
const DefaultMinLength = 512

// MaxMinLength bounds min_length: a response of unknown length is held
// while its first min_length bytes arrive, and the server holds at most
// 32 KiB of an uncommitted body (server.streamThreshold).
const MaxMinLength = 32 << 10

// maxCodings is the number of codings known (zstd, br, gzip).
const maxCodings = 3

var (
	ErrCoding    = errors.New("compress: unknown encoding (want zstd, br or gzip)")
	ErrDuplicate = errors.New("compress: encoding listed twice")
	ErrLevel     = errors.New("compress: level out of range (gzip 1-9, br 0-11, zstd 1-22)")
	ErrMinLength = errors.New("compress: min_length must be 0-32768")
	ErrType      = errors.New("compress: media type must be type/subtype or type/*")
)

// Policy is a route's compression policy; it implements
// server.Compressor and is safe for concurrent use.
type Policy struct {
	codings   []coding
	minLength int64
	exact     []string // lower case "type/subtype"
	wildcard  []string // lower case "type/" of "type/*"
}

type coding struct {
	name string
	pool *sync.Pool
}

// New validates o and builds its Policy.
func New(o Options) (*Policy, error) {
	p := &Policy{minLength: o.MinLength}
	if p.minLength == 0 {
		p.minLength = DefaultMinLength
	}
	if p.minLength < 0 || p.minLength > MaxMinLength {
		return nil, ErrMinLength
	}
	encs := o.Encodings
	if len(encs) == 0 {
		encs = DefaultEncodings
	}
	for _, name := range encs {
		level, err := levelFor(name, o.Levels)
		if err != nil {
			return nil, err
		}
		for _, c := range p.codings {
			if c.name == name {
				return nil, ErrDuplicate
			}
		}
		p.codings = append(p.codings, coding{name: name, pool: poolFor(name, level)})
	}
	for name := range o.Levels {
		if _, err := levelFor(name, nil); err != nil {
			return nil, err
		}
	}
	types := o.Types
	if len(types) == 0 {
		types = DefaultTypes
	}
	for _, t := range types {
		t = strings.ToLower(strings.TrimSpace(t))
		i := strings.IndexByte(t, '/')
		if i <= 0 || i == len(t)-1 || strings.ContainsAny(t, " ;,") || strings.Count(t, "/") != 1 {
			return nil, ErrType
		}
		if t[i+1:] == "*" {
			p.wildcard = append(p.wildcard, t[:i+1])
		} else if strings.Contains(t, "*") {
			return nil, ErrType
		} else {
			p.exact = append(p.exact, t)
		}
	}
	return p, nil
}

// levelFor is the configured or default level of a coding.
func levelFor(name string, levels map[string]int) (int, error) {
	var def, lo, hi int
	switch name {
	case "gzip":
		def, lo, hi = DefaultGzipLevel, minGzipLevel, maxGzipLevel
	case "br":
		def, lo, hi = DefaultBrotliLevel, minBrotliLevel, maxBrotliLevel
	case "zstd":
		def, lo, hi = DefaultZstdLevel, minZstdLevel, maxZstdLevel
	default:
		return 0, ErrCoding
	}
	l, ok := levels[name]
	if !ok {
		return def, nil
	}
	if l < lo || l > hi {
		return 0, ErrLevel
	}
	return l, nil
}

// MinLength implements server.Compressor.
func (p *Policy) MinLength() int64 { return p.minLength }

// Compressible implements server.Compressor: the media type of ct (before
// any parameter) is listed. A response without Content-Type is not
// compressed: its type is unknown, and it may already be binary.
func (p *Policy) Compressible(ct []byte) bool {
	for i, c := range ct {
		if c == ';' {
			ct = ct[:i]
			break
		}
	}
	ct = ascii.TrimOWS(ct)
	for _, t := range p.exact {
		if ascii.EqualFold(ct, t) {
			return true
		}
	}
	for _, w := range p.wildcard {
		if len(ct) > len(w) && ascii.EqualFold(ct[:len(w)], w) {
			return true
		}
	}
	return false
}

// Encoder implements server.Compressor.
func (p *Policy) Encoder(ae []byte) server.BodyEncoder {
	i := choose(ae, p.codings)
	if i < 0 {
		return nil
	}
	return p.codings[i].pool.Get().(server.BodyEncoder)
}

// Codings lists the policy's codings in order of preference.
func (p *Policy) Codings() []string {
	out := make([]string, len(p.codings))
	for i, c := range p.codings {
		out[i] = c.name
	}
	return out
}

var _ server.Compressor = (*Policy)(nil)
