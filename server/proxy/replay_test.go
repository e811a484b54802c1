package proxy

import (
	"testing"

	phttp "github.com/simdedge/simdedge/parse/http"
)

// TestMayResend is the resend rule as a table (replay.go).
func TestMayResend(t *testing.T) {
	for _, tc := range []struct {
		head                string
		written, replayable bool
		want                bool
	}{
		{"POST / HTTP/1.1\r\nHost: x\r\n\r\n", false, true, true},
		{"POST / HTTP/1.1\r\nHost: x\r\n\r\n", true, true, false},
		{"PATCH / HTTP/1.1\r\nHost: x\r\n\r\n", true, true, false},
		{"POST / HTTP/1.1\r\nHost: x\r\nidempotency-key: \"k1\"\r\n\r\n", true, true, true},
		{"POST / HTTP/1.1\r\nHost: x\r\nIdempotency-Key: \"k1\"\r\n\r\n", true, false, false},
		{"GET / HTTP/1.1\r\nHost: x\r\n\r\n", true, true, true},
		{"HEAD / HTTP/1.1\r\nHost: x\r\n\r\n", true, true, true},
		{"OPTIONS / HTTP/1.1\r\nHost: x\r\n\r\n", true, true, true},
		{"TRACE / HTTP/1.1\r\nHost: x\r\n\r\n", true, true, true},
		{"PUT / HTTP/1.1\r\nHost: x\r\n\r\n", true, true, true},
		{"DELETE / HTTP/1.1\r\nHost: x\r\n\r\n", true, true, true},
		{"PUT / HTTP/1.1\r\nHost: x\r\n\r\n", true, false, false},
		{"get / HTTP/1.1\r\nHost: x\r\n\r\n", true, true, false}, // methods are case-sensitive
	} {
		var head phttp.Request
		if _, err := phttp.ParseRequest([]byte(tc.head), &head); err != nil {
			t.Fatalf("%q: %v", tc.head, err)
		}
		if got := mayResend(&head, tc.written, tc.replayable); got != tc.want {
			t.Errorf("%q written=%v replayable=%v: %v, want %v", tc.head, tc.written, tc.replayable, got, tc.want)
		}
	}
}
