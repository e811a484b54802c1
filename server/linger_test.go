package server

import (
	"bufio"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// TestErrorAnswerSurvivesUnreadInput: a client that sends a request line
// or head far over the limits, and keeps sending, reads the 414 or 431
// after it has sent everything, as a simple client does. Before the
// lingering close the server closed with the client's bytes unread, the
// kernel answered with a reset, and the client saw "connection reset"
// instead of the answer.
func TestErrorAnswerSurvivesUnreadInput(t *testing.T) {
	const (
		huge          = 2 << 20
		clientSendBuf = 32 << 10
	)
	for _, tc := range []struct {
		name string
		req  string
		want int
	}{
		{"414", "GET /" + strings.Repeat("a", huge) + " HTTP/1.1\r\nHost: x\r\n\r\n", 414},
		{"431", "GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("b", huge) + "\r\n\r\n", 431},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, addr := startTCP(t, okHandler("ok"), Options{})
			c := dial(t, addr)
			// A small send buffer: the kernel cannot take the whole
			// request at once, so the client is still sending when
			// the server answers and closes, as over a real network.
			c.(*net.TCPConn).SetWriteBuffer(clientSendBuf)
			sent := make(chan error, 1)
			go func() {
				_, err := io.WriteString(c, tc.req)
				sent <- err
			}()
			select {
			case err := <-sent:
				if err != nil {
					t.Fatalf("sending: %v (the server reset the connection)", err)
				}
			case <-time.After(testTimeout):
				t.Fatal("sending did not finish")
			}
			resp, _ := readResponse(t, bufio.NewReader(c), "GET")
			if resp.StatusCode != tc.want {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.want)
			}
		})
	}
}
