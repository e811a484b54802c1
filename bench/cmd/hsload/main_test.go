package main

import (
	"crypto/tls"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// TestOnceFullHandshakes: every connection is a new, full handshake (the
// server sees no resumption), carries one request with Connection: close,
// and a non-200 answer is an error.
func TestOnceFullHandshakes(t *testing.T) {
	var resumed, requests atomic.Int64
	status := atomic.Int64{}
	status.Store(http.StatusOK)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if r.TLS != nil && r.TLS.DidResume {
			resumed.Add(1)
		}
		if !r.Close {
			t.Error("request lacks Connection: close")
		}
		w.WriteHeader(int(status.Load()))
		_, _ = w.Write([]byte("hello, world\n"))
	}))
	srv.TLS = &tls.Config{MinVersion: tls.VersionTLS13}
	srv.StartTLS()
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "https://")
	cfg := &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS13, CurvePreferences: []tls.CurveID{tls.X25519}}
	req := []byte("GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
	const conns = 5
	for range conns {
		if err := once(addr, cfg, req); err != nil {
			t.Fatal(err)
		}
	}
	if requests.Load() != conns || resumed.Load() != 0 {
		t.Errorf("requests %d (want %d), resumed %d (want 0)", requests.Load(), conns, resumed.Load())
	}
	status.Store(http.StatusInternalServerError)
	if err := once(addr, cfg, req); !errors.Is(err, errStatus) {
		t.Errorf("500 answer: err = %v, want errStatus", err)
	}
}
