package server

import (
	"bufio"
	"crypto/tls"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testnet"
	"github.com/simdedge/simdedge/server/accesslog"
	"github.com/simdedge/simdedge/server/edgetls"
	"github.com/simdedge/simdedge/server/metrics"
)

// TestTLSObserved: handshakes are counted per listener by outcome (a good
// one, plain HTTP, garbage, a failed one) on both engines' TLS paths, and
// the access log names the request's TLS version.
func TestTLSObserved(t *testing.T) {
	p := newPKI(t)
	st, err := edgetls.New(edgetls.Options{Certificates: certFiles(p.a)})
	if err != nil {
		t.Fatal(err)
	}
	sink := &lockedBuffer{}
	alog, err := accesslog.Open(accesslog.Options{Writer: sink})
	if err != nil {
		t.Fatal(err)
	}
	set := metrics.NewSet()
	s := New(Options{Handler: tlsHandler(), Metrics: set, AccessLog: alog})
	l := testnet.Listen(t)
	addr := l.Addr().String()
	serveTLSOn(t, s, l, st)
	c := tlsClient(p, &tls.Config{ServerName: "a.example", MinVersion: tls.VersionTLS13})
	if _, body, err := getTLS(t, c, addr); err != nil || !strings.HasPrefix(body, "tls=true") {
		t.Fatalf("%q %v", body, err)
	}
	c.CloseIdleConnections()
	pc := dial(t, addr) // plain HTTP
	io.WriteString(pc, "GET / HTTP/1.1\r\nHost: a.example\r\n\r\n")
	readResponse(t, bufio.NewReader(pc), "GET")
	pc.Close()
	gc := dial(t, addr) // neither TLS nor HTTP
	gc.Write([]byte{0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07})
	io.Copy(io.Discard, gc)
	gc.Close()
	// An unknown CA: the client aborts the handshake.
	bad := tlsClient(p, &tls.Config{ServerName: "a.example", RootCAs: p.other.Pool})
	if _, _, err := getTLS(t, bad, addr); err == nil {
		t.Fatal("handshake with an unknown CA succeeded")
	}
	want := [metrics.TLSKinds]uint64{metrics.TLSOK: 1, metrics.TLSFailed: 1, metrics.TLSPlainHTTP: 1, metrics.TLSNotTLS: 1}
	deadline := time.Now().Add(testTimeout)
	for {
		got := set.Listener(addr).Totals().TLS
		if got == want {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("handshakes counted %v, want %v", got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := alog.Close(); err != nil {
		t.Fatal(err)
	}
	var e map[string]any
	if err := json.Unmarshal([]byte(strings.SplitN(sink.b.String(), "\n", 2)[0]), &e); err != nil || e["tls"] != "TLS1.3" {
		t.Errorf("access log %q: tls %v (%v)", sink.b.String(), e["tls"], err)
	}
}
