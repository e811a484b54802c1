package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestProxyForwards(t *testing.T) {
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Forwarded-For") == "" {
			t.Error("proxy did not set X-Forwarded-For")
		}
		io.WriteString(w, body)
	}))
	defer origin.Close()
	proxy := httptest.NewServer(newProxy(strings.TrimPrefix(origin.URL, "http://")))
	defer proxy.Close()
	for range 3 {
		resp, err := http.Get(proxy.URL + "/x")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || string(b) != body {
			t.Fatalf("got %d %q", resp.StatusCode, b)
		}
	}
}

func TestRunRejects(t *testing.T) {
	if err := run("nope", "127.0.0.1:0", ""); err == nil {
		t.Error("unknown mode accepted")
	}
	if err := run("httputil", "127.0.0.1:0", ""); err == nil {
		t.Error("httputil without upstream accepted")
	}
}
