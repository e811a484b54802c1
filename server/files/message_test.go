package files_test

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"testing"

	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/servertest"
)

// TestMessageTransport: files and compression over a message transport
// (one request per message; replies of at most 16 KiB): a large file
// arrives whole across reply messages (copied: no socket to sendfile to),
// a compressed answer decodes to the original.
func TestMessageTransport(t *testing.T) {
	testenv.CheckGoroutines(t)
	tr := makeTree(t)
	tab := gzipTable(t, tr.root)
	s := server.New(server.Options{Handler: tab})
	l := servertest.NewMessageListener(16 << 10)
	go s.ServeMessages(l)
	defer s.Close()
	for _, tc := range []struct {
		req    string
		coding string
		want   []byte
	}{
		{"GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n", "", tr.big},
		{"GET /big.bin HTTP/1.1\r\nHost: x\r\nRange: bytes=7-70006\r\n\r\n", "", tr.big[7:70007]},
		{"GET /c/data.json HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n\r\n", "gzip", tr.json},
	} {
		replies, err := l.Exchange([]byte(tc.req))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(bytes.Join(replies, nil))), nil)
		if err != nil {
			t.Fatalf("%q: %v", tc.req, err)
		}
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("%q: %v", tc.req, err)
		}
		if resp.Header.Get("Content-Encoding") != tc.coding {
			t.Fatalf("%q: Content-Encoding %q", tc.req, resp.Header.Get("Content-Encoding"))
		}
		if got := decode(t, tc.coding, b); !bytes.Equal(got, tc.want) {
			t.Errorf("%q: %d bytes, want %d (%d replies)", tc.req, len(got), len(tc.want), len(replies))
		}
	}
}
