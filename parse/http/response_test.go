package http

import (
	"errors"
	"testing"
)

func TestResponse(t *testing.T) {
	cases := []struct {
		name string
		in   string
		head bool
		want respResult
		err  error
	}{
		{"ok length", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", false, respResult{Version: HTTP11, Status: 200, Reason: "OK", Body: BodyLength, ContentLength: 5}, nil},
		{"no reason", "HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n", false, respResult{Version: HTTP11, Status: 200, ContentLength: 0}, nil},
		{"empty reason", "HTTP/1.1 200 \r\nContent-Length: 0\r\n\r\n", false, respResult{Version: HTTP11, Status: 200, ContentLength: 0}, nil},
		{"reason with tab and obs-text", "HTTP/1.1 404 Not\tFound \xe9\r\nContent-Length: 0\r\n\r\n", false, respResult{Version: HTTP11, Status: 404, Reason: "Not\tFound \xe9", ContentLength: 0}, nil},
		{"until close", "HTTP/1.1 200 OK\r\n\r\n", false, respResult{Version: HTTP11, Status: 200, Reason: "OK", Body: BodyUntilClose, ContentLength: -1, Close: true}, nil},
		{"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", false, respResult{Version: HTTP11, Status: 200, Reason: "OK", Body: BodyChunked, ContentLength: -1}, nil},
		{"chunked not final runs until close", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", false, respResult{Version: HTTP11, Status: 200, Reason: "OK", Body: BodyUntilClose, ContentLength: -1, Close: true}, nil},
		{"head ignores length", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", true, respResult{Version: HTTP11, Status: 200, Reason: "OK", Body: BodyNone, ContentLength: 5}, nil},
		{"head ignores chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", true, respResult{Version: HTTP11, Status: 200, Reason: "OK", Body: BodyNone, ContentLength: -1}, nil},
		{"204", "HTTP/1.1 204 No Content\r\n\r\n", false, respResult{Version: HTTP11, Status: 204, Reason: "No Content", ContentLength: -1}, nil},
		{"304 with length", "HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n", false, respResult{Version: HTTP11, Status: 304, Reason: "Not Modified", ContentLength: 10}, nil},
		{"100", "HTTP/1.1 100 Continue\r\n\r\n", false, respResult{Version: HTTP11, Status: 100, Reason: "Continue", ContentLength: -1}, nil},
		{"101 upgrade", "HTTP/1.1 101 Switching Protocols\r\nConnection: upgrade\r\nUpgrade: websocket\r\n\r\n", false, respResult{Version: HTTP11, Status: 101, Reason: "Switching Protocols", ContentLength: -1, Upgrade: "websocket"}, nil},
		{"http/1.0 keep-alive", "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\n", false, respResult{Version: HTTP10, Status: 200, Reason: "OK", Body: BodyLength, ContentLength: 1}, nil},
		{"expect ignored", "HTTP/1.1 200 OK\r\nExpect: pigeons\r\nContent-Length: 1\r\n\r\n", false, respResult{Version: HTTP11, Status: 200, Reason: "OK", Body: BodyLength, ContentLength: 1}, nil},
		{"http/1.0 closes", "HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\n", false, respResult{Version: HTTP10, Status: 200, Reason: "OK", Body: BodyLength, ContentLength: 1, Close: true}, nil},

		{"te and cl", "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", false, respResult{}, ErrContentLengthWithTE},
		{"bad status", "HTTP/1.1 2x0 OK\r\n\r\n", false, respResult{}, ErrInvalidStatus},
		{"status too low", "HTTP/1.1 099 OK\r\n\r\n", false, respResult{}, ErrInvalidStatus},
		{"status four digits", "HTTP/1.1 2000 OK\r\n\r\n", false, respResult{}, ErrInvalidStatus},
		{"no status", "HTTP/1.1\r\n\r\n", false, respResult{}, ErrInvalidStatusLine},
		{"version", "HTTP/2 200 OK\r\n\r\n", false, respResult{}, ErrInvalidVersion},
		{"version 2.0", "HTTP/2.0 200 OK\r\n\r\n", false, respResult{}, ErrUnsupportedVersion},
		{"rtsp", "RTSP/1.0 200 OK\r\n\r\n", false, respResult{}, ErrInvalidVersion},
		{"ctl in reason", "HTTP/1.1 200 O\x01K\r\n\r\n", false, respResult{}, ErrInvalidReason},
		{"bare lf", "HTTP/1.1 200 OK\nContent-Length: 0\r\n\r\n", false, respResult{}, ErrBareLF},
		{"obs-fold", "HTTP/1.1 200 OK\r\nX-A: b\r\n c\r\n\r\n", false, respResult{}, ErrObsFold},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := parseRespAll(t, defaultParser, []byte(c.in+"XYZ"), c.head)
			if !errors.Is(got.Err, c.err) || (c.err == nil) != (got.Err == nil) {
				t.Fatalf("err = %v, want %v", got.Err, c.err)
			}
			if c.err != nil {
				assertNoInput(t, got.Err, c.in)
				return
			}
			if got.N != len(c.in) {
				t.Errorf("n = %d, want %d", got.N, len(c.in))
			}
			got.N, got.Headers = 0, nil
			if got.Version != c.want.Version || got.Status != c.want.Status || got.Reason != c.want.Reason ||
				got.Body != c.want.Body || got.ContentLength != c.want.ContentLength ||
				got.Close != c.want.Close || got.Upgrade != c.want.Upgrade {
				t.Errorf("got  %+v\nwant %+v", got, c.want)
			}
			// Every prefix needs more.
			for i := 0; i < len(c.in); i++ {
				if p := parseRespAll(t, defaultParser, []byte(c.in[:i]), c.head); !errors.Is(p.Err, ErrNeedMore) {
					t.Fatalf("prefix %q: err = %v", c.in[:i], p.Err)
				}
			}
		})
	}
}
