package main

import (
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/quic-go/quic-go/http3"
)

// TestRun: both protocols count answered requests, and a server that
// answers 500 counts as errors.
func TestRun(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok\n")) })
	ts := httptest.NewUnstartedServer(ok)
	ts.EnableHTTP2 = true
	ts.StartTLS()
	defer ts.Close()
	if n, errs, _ := run(ts.URL+"/", 1, 2, 200*time.Millisecond, true); n == 0 || errs != 0 {
		t.Fatalf("h2: %d requests, %d errors", n, errs)
	}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cert := ts.TLS.Certificates[0]
	h3 := &http3.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/fail" {
			w.WriteHeader(500)
		}
	}), TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}}}
	go h3.Serve(pc)
	defer h3.Close()
	base := "https://" + pc.LocalAddr().String()
	if n, errs, _ := run(base+"/", 1, 2, 200*time.Millisecond, false); n == 0 || errs != 0 {
		t.Fatalf("h3: %d requests, %d errors", n, errs)
	}
	if n, errs, _ := run(base+"/fail", 1, 1, 100*time.Millisecond, false); n != 0 || errs == 0 {
		t.Fatalf("h3 500s: %d requests, %d errors", n, errs)
	}
}
