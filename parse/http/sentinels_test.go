package http

import (
	"os"
	"regexp"
	"testing"
)

// allSentinels lists every error the package returns (kept in step with
// errors.go by TestSentinelList).
var allSentinels = []error{
	ErrInvalidMethod,
	ErrInvalidTarget,
	ErrTargetFragment,
	ErrInvalidVersion,
	ErrUnsupportedVersion,
	ErrInvalidRequestLine,
	ErrInvalidStatusLine,
	ErrInvalidStatus,
	ErrInvalidReason,
	ErrBareCR,
	ErrBareLF,
	ErrInvalidHeaderName,
	ErrInvalidHeaderValue,
	ErrSpaceBeforeColon,
	ErrObsFold,
	ErrLeadingWhitespace,
	ErrMissingHost,
	ErrMultipleHost,
	ErrInvalidHost,
	ErrUnknownExpectation,
	ErrInvalidContentLength,
	ErrConflictingContentLength,
	ErrContentLengthWithTE,
	ErrChunkedNotFinal,
	ErrUnknownTransferCoding,
	ErrTransferCodingNotImplemented,
	ErrInvalidTransferEncoding,
	ErrTransferEncodingInHTTP10,
	ErrInvalidChunkSize,
	ErrChunkSizeOverflow,
	ErrInvalidChunkExtension,
	ErrMissingChunkCRLF,
	ErrInvalidTrailer,
	ErrChunkLineTooLong,
	ErrBodyTooLarge,
	ErrTrailerTooLarge,
	ErrRequestLineTooLong,
	ErrHeaderTooLarge,
	ErrTooManyHeaders,
}

// TestSentinelList checks that allSentinels names every sentinel declared
// in errors.go, so assertNoInput cannot pass a new error unchecked.
func TestSentinelList(t *testing.T) {
	src, err := os.ReadFile("errors.go")
	if err != nil {
		t.Fatal(err)
	}
	decl := regexp.MustCompile(`(?m)^\s*(Err\w+)\s*=\s*errors\.New\("([^"]*)"\)`)
	m := decl.FindAllSubmatch(src, -1)
	if len(m) != len(allSentinels) {
		t.Fatalf("errors.go declares %d sentinels, allSentinels lists %d", len(m), len(allSentinels))
	}
	seen := map[string]bool{}
	for i, e := range allSentinels {
		if string(m[i][2]) != e.Error() {
			t.Errorf("sentinel %s: text %q, list has %q", m[i][1], m[i][2], e.Error())
		}
		if seen[e.Error()] {
			t.Errorf("duplicate sentinel text %q", e.Error())
		}
		seen[e.Error()] = true
	}
}
