package servetest

import (
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/internal/testnet"
	"github.com/simdedge/simdedge/server"
)

// TestServeAnswersThenShutsDown: the addresses of Serve, ServeH2C (over
// h2c) and ServeListener answer, and once the test's cleanups have run
// the servers no longer accept and have left no goroutine behind.
func TestServeAnswersThenShutsDown(t *testing.T) {
	h := server.HandlerFunc(func(w *server.ResponseWriter, r *server.Request) { w.WriteString("ok") })
	var plain, h2c, mine string
	t.Run("serve", func(t *testing.T) {
		testenv.CheckGoroutines(t)
		_, plain = Start(t, server.Options{Handler: h}, server.EngineGoroutine)
		h2c = ServeH2C(t, server.New(server.Options{Handler: h}), server.EngineGoroutine)
		mine = ServeListener(t, server.New(server.Options{Handler: h}), testnet.Listen(t), server.EngineGoroutine)
		for _, tc := range []struct {
			addr string
			tr   *http.Transport
			want int
		}{{plain, &http.Transport{}, 1}, {h2c, testnet.H2Transport(nil), 2}, {mine, &http.Transport{}, 1}} {
			c := &http.Client{Timeout: 10 * time.Second, Transport: tc.tr}
			resp, err := c.Get("http://" + tc.addr + "/")
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(b) != "ok" || resp.ProtoMajor != tc.want {
				t.Errorf("%s: %s %q, want HTTP/%d \"ok\"", tc.addr, resp.Proto, b, tc.want)
			}
			tc.tr.CloseIdleConnections()
		}
	})
	for _, a := range []string{plain, h2c, mine} {
		if c, err := net.DialTimeout("tcp", a, time.Second); err == nil {
			c.Close()
			t.Errorf("%s still accepts after cleanup", a)
		}
	}
}
