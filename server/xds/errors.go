package xds

import (
	"errors"
	"strconv"
	"strings"
)

// Sentinels that a FieldError wraps.
var (
	// ErrRefused: a field simdedge does not honour is set.
	ErrRefused = errors.New("xds: field not supported by simdedge")
	// ErrInvalid: a field's value is wrong (a bad regex, a port out of
	// range, a status simdedge cannot send).
	ErrInvalid = errors.New("xds: invalid value")
	// ErrUnknownCluster: a route names a cluster the control plane did
	// not send.
	ErrUnknownCluster = errors.New("xds: unknown cluster")
	// ErrClash: an xDS resource takes a name or address the static
	// configuration has.
	ErrClash = errors.New("xds: clashes with the static configuration")
	// ErrConfig: the translated configuration failed simdedge's own
	// validation or build.
	ErrConfig = errors.New("xds: configuration refused")
)

// FieldError names the resource and the field a NACK is about: it is
// the error_detail message the control plane receives.
type FieldError struct {
	Kind     string // "listener", "route_configuration", "cluster", "cluster_load_assignment"
	Resource string // the resource's name, made printable (safeName)
	Field    string // a dotted path in the proto's field names
	Msg      string
	Err      error
}

func (e *FieldError) Error() string {
	var b strings.Builder
	b.WriteString("xds: ")
	b.WriteString(e.Kind)
	b.WriteByte(' ')
	b.WriteString(e.Resource)
	if e.Field != "" {
		b.WriteString(": ")
		b.WriteString(e.Field)
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}

func (e *FieldError) Unwrap() error { return e.Err }

// maxNameLen bounds a resource name quoted in an error.
const maxNameLen = 80

// safeName quotes a name from the control plane for an error message:
// printable, bounded, so that no bytes of its choosing reach a log as
// they are.
func safeName(s string) string {
	if len(s) > maxNameLen {
		s = s[:maxNameLen] + "..."
	}
	return strconv.QuoteToASCII(s)
}

// at builds FieldErrors for one resource.
type at struct {
	kind, name string
}

func (a at) err(field string, sentinel error, msg string) error {
	return &FieldError{Kind: a.kind, Resource: safeName(a.name), Field: field, Msg: msg, Err: sentinel}
}

func (a at) refused(field string) error {
	return a.err(field, ErrRefused, "not supported by simdedge")
}

func (a at) invalid(field, msg string) error { return a.err(field, ErrInvalid, msg) }
