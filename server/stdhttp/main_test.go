package stdhttp_test

import (
	"bufio"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testcert"
	"github.com/simdedge/simdedge/internal/testnet"
	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/internal/enginetest"
	"github.com/simdedge/simdedge/server/internal/servetest"
	"github.com/simdedge/simdedge/server/stdhttp"
)

// testEngine is the engine the current run serves with (TestMain).
var testEngine server.Engine

func TestMain(m *testing.M) {
	enginetest.Main(m, func(e string) { testEngine = server.Engine(e) })
}

// testTimeout bounds every wait of these tests.
const testTimeout = 10 * time.Second

// serve runs h behind Handler on a loopback listener (taking h2c too) on
// the engine under test, until the test ends, and returns its address.
func serve(t *testing.T, h http.Handler, o server.Options) string {
	t.Helper()
	return serveOn(t, h, o, nil)
}

// serveTLS is serve over TLS (HTTP/1.1 by ALPN); it returns the client's
// configuration too.
func serveTLS(t *testing.T, h http.Handler) (string, *tls.Config) {
	t.Helper()
	ca := testcert.NewCA(t, "ca")
	leaf := ca.Leaf(t, "leaf", []string{"localhost"}, time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	srv := &tls.Config{Certificates: []tls.Certificate{leaf.TLS}, NextProtos: []string{"http/1.1"}}
	return serveOn(t, h, server.Options{}, srv), &tls.Config{RootCAs: ca.Pool, ServerName: "localhost"}
}

func serveOn(t *testing.T, h http.Handler, o server.Options, tlsCfg *tls.Config) string {
	t.Helper()
	o.Handler = stdhttp.Handler(h)
	s := server.New(o)
	if tlsCfg != nil {
		return servetest.ServeTLS(t, s, testEngine, server.TLSOptions{Config: tlsCfg})
	}
	return servetest.ServeH2C(t, s, testEngine)
}

// client returns an HTTP/1.1 client, or an h2c one.
func client(t *testing.T, h2c bool) *http.Client {
	tr := testnet.H2Transport(nil)
	if !h2c {
		tr = &http.Transport{Protocols: new(http.Protocols)}
		tr.Protocols.SetHTTP1(true)
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Timeout: testTimeout, Transport: tr}
}

// dial opens a raw connection with a deadline that bounds the test, over
// TLS with cfg if it is not nil.
func dial(t *testing.T, addr string, cfg ...*tls.Config) (net.Conn, *bufio.Reader) {
	t.Helper()
	var c net.Conn
	var err error
	if len(cfg) > 0 {
		c, err = tls.Dial("tcp", addr, cfg[0])
	} else {
		c, err = net.Dial("tcp", addr)
	}
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(testTimeout))
	t.Cleanup(func() { c.Close() })
	return c, bufio.NewReader(c)
}

// wait receives from ch within testTimeout.
func wait[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(testTimeout):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

func readAll(t *testing.T, r io.Reader) string {
	t.Helper()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
