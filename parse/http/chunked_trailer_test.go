package http

import (
	"fmt"
	"testing"
)

// OnTrailer sees each trailer field once, trimmed, whatever the split of
// the input across Decode calls.
func TestChunkedOnTrailer(t *testing.T) {
	body := "5\r\nhello\r\n0\r\nGrpc-Status: 0 \r\nX-T:\tv w\r\n\r\n"
	for split := 1; split < len(body); split++ {
		var got []string
		d := ChunkedDecoder{OnTrailer: func(n, v []byte) { got = append(got, fmt.Sprintf("%s=%q", n, v)) }}
		buf := []byte(body[:split])
		rest := body[split:]
		var data []byte
		for {
			n, consumed, err := d.Decode(buf)
			data = append(data, buf[:n]...)
			buf = append(buf[:0], buf[consumed:]...)
			if err == nil {
				break
			}
			if err != ErrNeedMore || rest == "" {
				t.Fatalf("split %d: %v", split, err)
			}
			buf = append(buf, rest[0])
			rest = rest[1:]
		}
		if string(data) != "hello" || len(got) != 2 || got[0] != `Grpc-Status="0"` || got[1] != `X-T="v w"` {
			t.Fatalf("split %d: data %q trailers %q", split, data, got)
		}
	}
}
