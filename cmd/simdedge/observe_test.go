package main

import (
	"strings"
	"testing"

	"github.com/simdedge/simdedge/server/config"
)

// TestObserveNotReloadable: a reload that changes access_log, request_id
// or trace is refused by key; one that keeps them passes.
func TestObserveNotReloadable(t *testing.T) {
	const routes = "routes:\n  - match: {path: /}\n    respond: {status: 200}\n"
	parse := func(s string) *config.Config {
		c, err := config.Parse([]byte(s + routes))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	base := parse("access_log: {path: stderr}\nrequest_id: {}\n")
	if err := checkObserveReloadable(base, parse("access_log: {path: stderr, format: json}\nrequest_id: {header: X-Request-Id}\n")); err != nil {
		t.Errorf("same effective keys refused: %v", err)
	}
	for in, key := range map[string]string{
		"request_id: {}\n": "access_log",
		"access_log: {path: stdout}\nrequest_id: {}\n":                          "access_log",
		"access_log: {path: stderr}\n":                                          "request_id",
		"access_log: {path: stderr}\nrequest_id: {}\ntrace: {generate: true}\n": "trace",
	} {
		err := checkObserveReloadable(base, parse(in))
		if err == nil || !strings.HasPrefix(err.Error(), key+":") {
			t.Errorf("%q: %v, want a refusal naming %s", in, err, key)
		}
	}
}
