package main

import (
	"strings"
	"testing"
	"time"

	"github.com/simdedge/simdedge/server/config"
)

func TestFormatTable(t *testing.T) {
	got := formatTable([]row{
		{scenario: "flood", v: variant{engine: engineLoop}, result: "peak RSS 1.0 MB, after 0.9 MB", notes: "a|b\nc"},
		{scenario: "trickle", v: variant{engine: engineLoop, proxyOnLoop: "false", path: proxyPath}, result: "408 ×2 at 20.0 s"},
	})
	want := "| scenario | engine | proxy_on_loop | result | notes |\n" +
		"| --- | --- | --- | --- | --- |\n" +
		"| flood | loop | – | peak RSS 1.0 MB, after 0.9 MB | a\\|b c |\n" +
		"| trickle /up/attack | loop | false | 408 ×2 at 20.0 s |   |\n"
	if got != want {
		t.Errorf("formatTable:\n%s\nwant:\n%s", got, want)
	}
}

func TestSummarize(t *testing.T) {
	s := time.Second
	got := summarize([]outcome{
		{at: 20 * s, status: 408},
		{at: 25*s + 300*time.Millisecond, status: 408},
		{at: 60 * s, open: true},
		{at: 10 * s},
		{at: 0, failed: true},
		{at: 21 * s, status: 408},
	}, 60*s)
	want := "408 ×3 at 20.0–25.3 s; still open ×1 at 60.0 s; closed without answer ×1 at 10.0 s; failed ×1"
	if got != want {
		t.Errorf("summarize = %q\nwant        %q", got, want)
	}
	if got := summarize(nil, s); got != "no connections" {
		t.Errorf("summarize(nil) = %q", got)
	}
	if got := fmtSeconds(150 * s); got != "150 s" {
		t.Errorf("fmtSeconds = %q", got)
	}
}

func TestParseStatus(t *testing.T) {
	for in, want := range map[string]int{
		"HTTP/1.1 408 Request Timeout\r\n": 408,
		"HTTP/1.0 200 OK":                  200,
		"HTTP/1.1 504":                     504,
		"HTTP/1.1 50":                      0,
		"HTTP/2 200 OK":                    0,
		"HTTP/1.1 abc OK":                  0,
		"HTTP/1.1 099 x":                   0,
		"garbage":                          0,
		"":                                 0,
	} {
		if got := parseStatus([]byte(in)); got != want {
			t.Errorf("parseStatus(%q) = %d, want %d", in, got, want)
		}
	}
}

func TestCountEstablished(t *testing.T) {
	// Lines in /proc/net/tcp's format: a listener on 8080 (0x1F90), two
	// established connections to it, one in TIME_WAIT (06), and the
	// client side of one (remote port 8080, not counted).
	const proc = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1 0000000000000000 100 0 0 10 0
   1: 0100007F:1F90 0100007F:A1B2 01 00000000:00000000 00:00000000 00000000     0        0 2 1 0000000000000000 20 4 30 10 -1
   2: 0100007F:1F90 0200007F:A1B3 01 00000000:00000000 00:00000000 00000000     0        0 3 1 0000000000000000 20 4 30 10 -1
   3: 0100007F:1F90 0100007F:A1B4 06 00000000:00000000 00:00000000 00000000     0        0 0 0 0000000000000000
   4: 0100007F:A1B2 0100007F:1F90 01 00000000:00000000 00:00000000 00000000     0        0 4 1 0000000000000000 20 4 30 10 -1
`
	n, err := countEstablished(proc, 8080)
	if err != nil || n != 2 {
		t.Errorf("countEstablished = %d, %v; want 2", n, err)
	}
	for _, bad := range []string{"", "no header\n", "local_address\n 0: 0100007F 0 01\n", "local_address\n 0: 0100007F:XYZW 0 01\n", "local_address\n 0: x\n"} {
		if _, err := countEstablished(bad, 8080); err == nil {
			t.Errorf("countEstablished(%q) succeeded", bad)
		}
	}
}

// TestConfigYAML: every variant's configuration is one today's simdedge
// accepts, with proxy_on_loop only where the engine allows it, and the
// extra lines land under their keys.
func TestConfigYAML(t *testing.T) {
	o := &options{maxConns: defaultMaxConns}
	vs := append(originVariants(engineNames), proxyVariants(engineNames)...)
	if len(vs) != 5 {
		t.Fatalf("%d variants, want 2 origin + 3 proxy", len(vs))
	}
	for _, v := range vs {
		y := configYAML(o, v, "127.0.0.1:1", "127.0.0.1:2")
		c, err := config.Parse([]byte(y))
		if err != nil {
			t.Errorf("%+v: %v\n%s", v, err, y)
			continue
		}
		if c.Limits.MaxConns != defaultMaxConns || c.Engine != v.engine || (c.ProxyOnLoop != nil) != (v.proxyOnLoop != "") {
			t.Errorf("%+v: parsed %+v", v, c)
		}
	}
	o.limitsYAML = "max_conns_per_ip: 100; "
	o.timeoutsYAML = "body_min_rate: 100"
	y := configYAML(o, variant{engine: engineLoop}, "127.0.0.1:1", "127.0.0.1:2")
	if !strings.Contains(y, "limits:\n  max_conns: 2000\n  max_conns_per_ip: 100\ntimeouts:\n  drain: 2s\n  body_min_rate: 100\n") {
		t.Errorf("extra lines misplaced:\n%s", y)
	}
}
