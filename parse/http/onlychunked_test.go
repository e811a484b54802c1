package http

import (
	"errors"
	"testing"
)

// TestOnlyChunked: under Options.OnlyChunked a request whose
// Transfer-Encoding lists a coding besides chunked is refused with 501
// (a server that only de-chunks would hand the coded bytes on as the
// content); without it the framing is reported as before.
func TestOnlyChunked(t *testing.T) {
	strict := NewParser(Options{OnlyChunked: true})
	for _, tc := range []struct {
		te      string
		refused bool
	}{
		{"chunked", false},
		{"CHUNKED", false},
		{"gzip, chunked", true},
		{"x-gzip,chunked", true},
		{"deflate , chunked", true},
		{"compress, chunked", true},
	} {
		raw := "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: " + tc.te + "\r\n\r\n"
		var req Request
		_, err := strict.ParseRequest([]byte(raw), &req)
		if tc.refused != errors.Is(err, ErrTransferCodingNotImplemented) || !tc.refused && err != nil {
			t.Errorf("%q: %v", tc.te, err)
		}
		if tc.refused && StatusFor(err) != 501 {
			t.Errorf("%q: status %d, want 501", tc.te, StatusFor(err))
		}
		if _, err := ParseRequest([]byte(raw), &req); err != nil || req.Body != BodyChunked {
			t.Errorf("%q without OnlyChunked: %v %v", tc.te, err, req.Body)
		}
	}
	// Split over two fields: one list.
	var req Request
	if _, err := strict.ParseRequest([]byte("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n"), &req); !errors.Is(err, ErrTransferCodingNotImplemented) {
		t.Errorf("split fields: %v", err)
	}
}
