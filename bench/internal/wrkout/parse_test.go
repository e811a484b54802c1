package wrkout

import (
	"os"
	"testing"
	"time"
)

// testdata holds real `wrk --latency` output from this machine: fasthttp.txt
// against the fasthttp peer, nginx404.txt against an nginx answering 404.

func TestParseFasthttp(t *testing.T) {
	out, err := os.ReadFile("testdata/fasthttp.txt")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Parse(string(out))
	if err != nil {
		t.Fatal(err)
	}
	if r.Requests != 28648 || r.Duration != 2010*time.Millisecond || r.RPS != 14234.01 {
		t.Errorf("summary = %d requests in %v, %v/s", r.Requests, r.Duration, r.RPS)
	}
	want := map[float64]time.Duration{
		50: 591 * time.Microsecond,
		75: 9080 * time.Microsecond,
		90: 44330 * time.Microsecond,
		99: 218450 * time.Microsecond,
	}
	if len(r.Latency) != len(want) {
		t.Errorf("latency = %v", r.Latency)
	}
	for p, d := range want {
		if got := r.Latency[p]; got != d {
			t.Errorf("p%v = %v, want %v", p, got, d)
		}
	}
	if r.Non2xx != 0 || r.SocketErrors != 0 {
		t.Errorf("errors = %d non-2xx, %d socket", r.Non2xx, r.SocketErrors)
	}
}

func TestParseNon2xx(t *testing.T) {
	out, err := os.ReadFile("testdata/nginx404.txt")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Parse(string(out))
	if err != nil {
		t.Fatal(err)
	}
	if r.Non2xx != 2818 || r.Requests != 2818 || r.Latency[99] != 465730*time.Microsecond {
		t.Errorf("got %+v", r)
	}
}

func TestParseSocketErrors(t *testing.T) {
	// wrk prints this line only when a socket error occurred; the rest of
	// the output is the fasthttp sample.
	out, err := os.ReadFile("testdata/fasthttp.txt")
	if err != nil {
		t.Fatal(err)
	}
	s := string(out) + "  Socket errors: connect 1, read 12, write 0, timeout 3\n"
	r, err := Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	if r.SocketErrors != 16 {
		t.Errorf("socket errors = %d, want 16", r.SocketErrors)
	}
}

func TestParseFailures(t *testing.T) {
	for _, s := range []string{
		"",
		"unable to connect to 127.0.0.1:18998 Connection refused\n",
		"  28648 requests in 2.01s, 3.63MB read\n", // no Requests/sec
		"  Latency Distribution\n     50%  abc\n  1 requests in 1s, 1B read\nRequests/sec: 1\n",
	} {
		if _, err := Parse(s); err == nil {
			t.Errorf("Parse(%q) succeeded", s)
		}
	}
}

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"591.00us", 591 * time.Microsecond},
		{"9.08ms", 9080 * time.Microsecond},
		{"2.01s", 2010 * time.Millisecond},
		{"1.50m", 90 * time.Second},
		{"1.00h", time.Hour},
	}
	for _, tt := range tests {
		got, err := ParseDuration(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseDuration(%q) = %v, %v", tt.in, got, err)
		}
	}
	for _, bad := range []string{"", "1", "ms", "-1ms", "1.0xs"} {
		if _, err := ParseDuration(bad); err == nil {
			t.Errorf("ParseDuration(%q) succeeded", bad)
		}
	}
}
