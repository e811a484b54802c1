package http

import "errors"

// ErrNeedMore reports that buf holds only part of a message head (or, for
// the body decoders, of a chunk line): nothing was consumed, and the caller
// should call again with the same bytes plus more.
var ErrNeedMore = errors.New("http: need more data")

// Sentinel errors. Each names one rule; none carries input bytes, so they
// are safe to log and cost nothing to return. StatusFor maps them to the
// response status a server sends.
var (
	// Start line (RFC 9112 §3, §4).
	ErrInvalidMethod      = errors.New("http: invalid method")
	ErrInvalidTarget      = errors.New("http: invalid request target")
	ErrTargetFragment     = errors.New("http: fragment in request target")
	ErrInvalidVersion     = errors.New("http: invalid http version")
	ErrUnsupportedVersion = errors.New("http: unsupported http version")
	ErrInvalidRequestLine = errors.New("http: invalid request line")
	ErrInvalidStatusLine  = errors.New("http: invalid status line")
	ErrInvalidStatus      = errors.New("http: invalid status code")
	ErrInvalidReason      = errors.New("http: invalid reason phrase")

	// Line endings (RFC 9112 §2.2).
	ErrBareCR = errors.New("http: bare cr")
	ErrBareLF = errors.New("http: bare lf")

	// Field lines (RFC 9112 §5, RFC 9110 §5).
	ErrInvalidHeaderName  = errors.New("http: invalid header field name")
	ErrInvalidHeaderValue = errors.New("http: invalid byte in header field value")
	ErrSpaceBeforeColon   = errors.New("http: whitespace between header field name and colon")
	ErrObsFold            = errors.New("http: obsolete line folding")
	ErrLeadingWhitespace  = errors.New("http: whitespace before first header field")
	ErrMissingHost        = errors.New("http: missing host header")
	ErrMultipleHost       = errors.New("http: more than one host header")
	ErrInvalidHost        = errors.New("http: invalid host header")
	ErrUnknownExpectation = errors.New("http: unknown expectation")

	// Framing (RFC 9112 §6).
	ErrInvalidContentLength     = errors.New("http: invalid content-length")
	ErrConflictingContentLength = errors.New("http: conflicting content-length values")
	ErrContentLengthWithTE      = errors.New("http: both transfer-encoding and content-length")
	ErrChunkedNotFinal          = errors.New("http: chunked is not the final transfer coding")
	ErrUnknownTransferCoding    = errors.New("http: unknown transfer coding")
	// ErrTransferCodingNotImplemented: a known coding other than
	// chunked, refused under Options.OnlyChunked (501).
	ErrTransferCodingNotImplemented = errors.New("http: transfer coding not implemented")
	ErrInvalidTransferEncoding      = errors.New("http: invalid transfer-encoding")
	ErrTransferEncodingInHTTP10     = errors.New("http: transfer-encoding in an http/1.0 message")

	// Chunked body (RFC 9112 §7.1).
	ErrInvalidChunkSize      = errors.New("http: invalid chunk size")
	ErrChunkSizeOverflow     = errors.New("http: chunk size overflow")
	ErrInvalidChunkExtension = errors.New("http: invalid chunk extension")
	ErrMissingChunkCRLF      = errors.New("http: missing crlf after chunk data")
	ErrInvalidTrailer        = errors.New("http: invalid trailer field")
	ErrChunkLineTooLong      = errors.New("http: chunk line too long")
	ErrBodyTooLarge          = errors.New("http: body too large")
	ErrTrailerTooLarge       = errors.New("http: trailer section too large")

	// Limits (Options).
	ErrRequestLineTooLong = errors.New("http: request line too long")
	ErrHeaderTooLarge     = errors.New("http: header section too large")
	ErrTooManyHeaders     = errors.New("http: too many header fields")
)

// StatusFor returns the HTTP status code a server should answer with when
// parsing failed with err: 414 for an over-long request line, 431 for an
// over-large header section, 413 for an over-large body, 501 for a transfer
// coding the server does not implement (RFC 9112 §6.1), 417 for an
// expectation other than 100-continue (RFC 9110 §10.1.1), 505 for an HTTP
// version other than 1.0 and 1.1, and 400 for everything else (a fragment
// in the target among them), including errors this package did not
// produce. It returns 0 for a nil error and
// for ErrNeedMore, which are not failures.
func StatusFor(err error) int {
	switch {
	case err == nil, errors.Is(err, ErrNeedMore):
		return 0
	case errors.Is(err, ErrRequestLineTooLong):
		return 414
	case errors.Is(err, ErrHeaderTooLarge), errors.Is(err, ErrTooManyHeaders),
		errors.Is(err, ErrTrailerTooLarge):
		return 431
	case errors.Is(err, ErrBodyTooLarge):
		return 413
	case errors.Is(err, ErrUnknownTransferCoding), errors.Is(err, ErrTransferCodingNotImplemented):
		return 501
	case errors.Is(err, ErrUnknownExpectation):
		return 417
	case errors.Is(err, ErrUnsupportedVersion):
		return 505
	}
	return 400
}
