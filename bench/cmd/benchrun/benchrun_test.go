package main

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseAreas(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"all", []string{"url", "http", "json", "asm", "xdp", "origin", "proxy"}},
		{"micro", []string{"url", "http", "json", "asm", "xdp"}},
		{"load,url", []string{"origin", "proxy", "url"}},
		{"asm, asm", []string{"asm"}},
	}
	for _, tt := range tests {
		got, err := parseAreas(tt.in)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("parseAreas(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	if _, err := parseAreas("url,nope"); err == nil {
		t.Error("unknown area accepted")
	}
}

func TestResultBase(t *testing.T) {
	at := time.Date(2026, 11, 22, 23, 30, 0, 0, time.FixedZone("X", -3600))
	if got := resultBase(at, "vm 1/a", false); got != "2026-11-23-vm_1_a" {
		t.Errorf("resultBase = %q", got)
	}
	if got := resultBase(at, "", true); got != "2026-11-23-unknown-quick" {
		t.Errorf("resultBase quick = %q", got)
	}
}

func TestEstimateRun(t *testing.T) {
	if a, b := estimateRun("100ms"), estimateRun("1s"); !(a > 0.1 && b > 1 && b > a) {
		t.Errorf("estimateRun: 100ms %v, 1s %v", a, b)
	}
	if estimateRun("100x") <= 0 {
		t.Error("iteration bench time has no estimate")
	}
}

func TestSkipNotes(t *testing.T) {
	out := "--- SKIP: BenchmarkJSON/canada\n    corpus_test.go:25: corpus json/canada.json not available: no such file\nPASS\n"
	n := skipNotes(out)
	if len(n) != 1 || !strings.Contains(n[0], "BenchmarkJSON/canada skipped: corpus_test.go:25: corpus json/canada.json not available") {
		t.Errorf("skipNotes = %q", n)
	}
}

func TestNginxConf(t *testing.T) {
	for _, upstream := range []string{"", "127.0.0.1:9"} {
		var b strings.Builder
		err := nginxConf.Execute(&b, map[string]any{"Dir": "/tmp/x", "Port": 1234, "Upstream": upstream, "Body": `hello\n`})
		if err != nil {
			t.Fatal(err)
		}
		s := b.String()
		for _, want := range []string{"daemon off;", "pid /tmp/x/nginx.pid;", "listen 127.0.0.1:1234;", "access_log off;"} {
			if !strings.Contains(s, want) {
				t.Errorf("upstream %q: config lacks %q", upstream, want)
			}
		}
		if proxy := strings.Contains(s, "proxy_pass http://backend;") && strings.Contains(s, "server 127.0.0.1:9;"); proxy != (upstream != "") {
			t.Errorf("upstream %q: proxy section present = %v\n%s", upstream, proxy, s)
		}
		if strings.Count(s, "{") != strings.Count(s, "}") {
			t.Errorf("unbalanced braces:\n%s", s)
		}
	}
}

func TestSimdedgeConf(t *testing.T) {
	var b strings.Builder
	if err := simdedgeConf.Execute(&b, map[string]any{"Port": 1, "Upstream": "127.0.0.1:2", "Body": "x"}); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	for _, want := range []string{`listen: "127.0.0.1:1"`, `targets: ["127.0.0.1:2"]`, "proxy: {upstream: backend}"} {
		if !strings.Contains(s, want) {
			t.Errorf("config lacks %q:\n%s", want, s)
		}
	}
}

func TestTailBuffer(t *testing.T) {
	var tb tailBuffer
	tb.Write([]byte(strings.Repeat("x", tailMax)))
	tb.Write([]byte("\nfirst\nlast line\n"))
	if tb.Last() != "last line" || len(tb.buf) != tailMax {
		t.Errorf("Last = %q, len %d", tb.Last(), len(tb.buf))
	}
}
