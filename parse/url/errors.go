package url

import "errors"

// Sentinel errors. Each names the URL Standard's validation error (or
// failure) that made parsing fail; none echoes input bytes. Parse and the
// setters wrap them in *Error.
var (
	ErrInvalidURL      = errors.New("url: invalid URL")
	ErrMissingScheme   = errors.New("url: missing scheme and no usable base URL")
	ErrHostMissing     = errors.New("url: host missing")
	ErrInvalidHost     = errors.New("url: invalid host")
	ErrForbiddenHost   = errors.New("url: forbidden code point in host")
	ErrInvalidIPv4     = errors.New("url: invalid IPv4 address")
	ErrInvalidIPv6     = errors.New("url: invalid IPv6 address")
	ErrInvalidDomain   = errors.New("url: invalid domain (IDNA to-ASCII failed)")
	ErrInvalidPort     = errors.New("url: invalid port")
	ErrInvalidScheme   = errors.New("url: invalid scheme")
	ErrTooLong         = errors.New("url: input too long")
	ErrSetterRejected  = errors.New("url: setter value rejected")
	ErrInvalidEncoding = errors.New("url: invalid percent-encoding")
)

// Error is the error Parse, ParseInto and the setters return: the operation,
// the input and the underlying sentinel. Error() never includes Input, so
// untrusted bytes do not leak into logs through err.Error(); callers that
// want them can read the field.
type Error struct {
	Op    string // "parse", "set_protocol", ...
	Input string // the input as given
	Err   error  // one of the sentinels above
}

func (e *Error) Error() string { return e.Op + ": " + e.Err.Error() }

// Unwrap returns the sentinel, for errors.Is.
func (e *Error) Unwrap() error { return e.Err }
