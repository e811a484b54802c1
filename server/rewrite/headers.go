package rewrite

import (
	"errors"

	"github.com/simdedge/simdedge/internal/ascii"
	phttp "github.com/simdedge/simdedge/parse/http"
)

// Field is a header field to set or add, its value a template.
type Field struct {
	Name  string
	Value Template
}

// HeaderOps edits the header fields of a request or a response: remove
// (every field of each name), set (remove every field of the name, then
// add this one) and add (one more field line), applied in that order;
// set and added fields go after the kept ones, in configuration order.
// Names compare ASCII case-insensitively. Immutable once built.
type HeaderOps struct {
	set, add []field
	// drop is remove and the names of set: what goes before the adds.
	drop []string
}

// field is a Field with its name as bytes, made once (a request's
// fields are byte views).
type field struct {
	Field
	name []byte
}

// Side says whose fields HeaderOps edits; each side keeps the fields its
// framing depends on out of reach.
type Side uint8

const (
	RequestSide Side = iota
	ResponseSide
)

var (
	ErrName     = errors.New("rewrite: a field name must be an RFC 9110 token")
	ErrReserved = errors.New("rewrite: this field is the server's own (framing, hop-by-hop or forwarding) and cannot be edited")
	ErrHostOp   = errors.New("rewrite: Host can only be set (a request has exactly one)")
)

// reserved fields, per side: the framing and hop-by-hop fields (RFC 9110
// §7.6.1) the server and the proxy write themselves, and on requests the
// forwarding fields the proxy rebuilds (an edit would be overwritten, or
// worse, make two).
var reserved = [...][]string{
	RequestSide: {"Content-Length", "Transfer-Encoding", "Connection", "Keep-Alive", "Proxy-Connection",
		"TE", "Upgrade", "Expect", "Trailer", "X-Forwarded-For", "X-Forwarded-Proto", "Via"},
	ResponseSide: {"Content-Length", "Transfer-Encoding", "Connection", "Keep-Alive", "Proxy-Connection",
		"TE", "Upgrade", "Trailer", "Date"},
}

// NewHeaderOps checks the names and builds the edit. On requests Host may
// be set (not added or removed).
func NewHeaderOps(side Side, set, add []Field, remove []string) (HeaderOps, error) {
	check := func(name string, isSet bool) error {
		if !ascii.IsToken(name) {
			return ErrName
		}
		for _, r := range reserved[side] {
			if phttp.EqualFold([]byte(name), r) {
				return ErrReserved
			}
		}
		if side == RequestSide && !isSet && phttp.EqualFold([]byte(name), "Host") {
			return ErrHostOp
		}
		return nil
	}
	var o HeaderOps
	for _, f := range set {
		if err := check(f.Name, true); err != nil {
			return HeaderOps{}, err
		}
		o.set = append(o.set, field{f, []byte(f.Name)})
		o.drop = append(o.drop, f.Name)
	}
	for _, f := range add {
		if err := check(f.Name, false); err != nil {
			return HeaderOps{}, err
		}
		o.add = append(o.add, field{f, []byte(f.Name)})
	}
	for _, n := range remove {
		if err := check(n, false); err != nil {
			return HeaderOps{}, err
		}
		o.drop = append(o.drop, n)
	}
	return o, nil
}

// Empty reports that the edit changes nothing.
func (o *HeaderOps) Empty() bool { return len(o.set)+len(o.add)+len(o.drop) == 0 }

// Dropped lists the names whose fields go (remove, and set's): a view,
// not to be modified.
func (o *HeaderOps) Dropped() []string { return o.drop }

// Templates calls f with every value template (for checks at load).
func (o *HeaderOps) Templates(f func(name string, t *Template) error) error {
	for _, l := range [2][]field{o.set, o.add} {
		for i := range l {
			if err := f(l[i].Name, &l[i].Value); err != nil {
				return err
			}
		}
	}
	return nil
}

// Edit applies the edit to hs in place (its backing array: a parser's,
// which keeps it for the next request) and returns the edited fields;
// new values are expanded onto buf, which is returned grown (the fields
// are views into it, valid while the caller keeps buf). An unsafe
// expansion fails with ErrUnsafe.
func (o *HeaderOps) Edit(hs phttp.Headers, buf []byte, e *Env) (phttp.Headers, []byte, error) {
	if len(o.drop) > 0 {
		k := 0
		for _, h := range hs {
			if !o.drops(h.Name) {
				hs[k] = h
				k++
			}
		}
		hs = hs[:k]
	}
	for _, l := range [2][]field{o.set, o.add} {
		for i := range l {
			f := &l[i]
			n := len(buf)
			var err error
			if buf, err = f.Value.AppendValue(buf, e); err != nil {
				return hs, buf, err
			}
			hs = append(hs, phttp.Header{Name: f.name, Value: buf[n:len(buf):len(buf)]})
		}
	}
	return hs, buf, nil
}

// AppendLines expands set's and add's fields as "Name: value\r\n" lines
// onto dst (for a response head, after the Dropped fields are gone).
func (o *HeaderOps) AppendLines(dst []byte, e *Env) ([]byte, error) {
	n := len(dst)
	for _, l := range [2][]field{o.set, o.add} {
		for i := range l {
			f := &l[i]
			dst = append(dst, f.Name...)
			dst = append(dst, ": "...)
			var err error
			if dst, err = f.Value.AppendValue(dst, e); err != nil {
				return dst[:n], err
			}
			dst = append(dst, "\r\n"...)
		}
	}
	return dst, nil
}

func (o *HeaderOps) drops(name []byte) bool {
	for _, d := range o.drop {
		if phttp.EqualFold(name, d) {
			return true
		}
	}
	return false
}

// ValidName reports whether s can be a field name (an RFC 9110 token).
func ValidName(s string) bool { return ascii.IsToken(s) }
