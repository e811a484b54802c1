package main

import (
	"reflect"
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

// TestCustomYAML: the configurations of h2map, normalise and h2flood are
// ones today's simdedge accepts, on every variant.
func TestCustomYAML(t *testing.T) {
	o := &options{maxConns: defaultMaxConns, dir: t.TempDir()}
	cert, err := writeSelfSigned(o.dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		variants []variant
		backend  string
		routes   string
	}{
		{withKinds(proxyVariants(engineNames), protoH2C, protoH2), "127.0.0.1:2", h2mapRoutes},
		{withKinds(proxyVariants(engineNames), protoH1, protoH2C), "127.0.0.1:2", normaliseRoutes},
		{withKinds(originVariants(engineNames), floodKinds...), "", floodRoutes},
	} {
		for _, v := range tc.variants {
			l := listenerSpec{addr: "127.0.0.1:1"}
			if v.kind == protoH2 {
				l.tls = &cert
			}
			y := customYAML(o, v, []listenerSpec{l}, tc.backend, tc.routes)
			c, err := config.Parse([]byte(y))
			if err != nil {
				t.Errorf("%+v: %v\n%s", v, err, y)
				continue
			}
			if c.Engine != v.engine || len(c.Listeners) != 1 || c.Listeners[0].H2C == (l.tls != nil) || (c.ProxyOnLoop != nil) != (v.proxyOnLoop != "") {
				t.Errorf("%+v: parsed %+v", v, c)
			}
		}
	}
	if n := len(withKinds(proxyVariants(engineNames), protoH2C, protoH2)); n != 6 {
		t.Errorf("%d h2map variants, want 3 proxy setups × 2 protocols", n)
	}
	if n := len(withKinds(originVariants(engineNames), floodKinds...)); n != 6 {
		t.Errorf("%d h2flood variants, want 2 engines × 3 frames", n)
	}
}

func TestMappingDefect(t *testing.T) {
	for _, tc := range []struct {
		line, host, authority string
		bad                   bool
	}{
		{"GET /pub HTTP/1.1", "public.example", "public.example", false},
		{"GET /pub HTTP/1.1", "PUBLIC.example:8443", "public.example:8443", false},
		{"OPTIONS * HTTP/1.1", "public.example", "public.example", false},
		{"GET /pub HTTP/1.1", "admin.example", "public.example", true},
		{"GET /admin/x /pub HTTP/1.1", "public.example", "public.example", true},
		{"GET /pub/a\tb HTTP/1.1", "public.example", "public.example", true},
		{"GET /pub/a#b HTTP/1.1", "public.example", "public.example", true},
		{"GET /pub/caf\xe9 HTTP/1.1", "public.example", "public.example", true},
		{"GET * HTTP/1.1", "public.example", "public.example", true},
		{"GET /pub HTTP/1.1", "user@public.example", "user@public.example", true},
		{`GET /pub HTTP/1.1`, `public.example\x`, `public.example\x`, true},
		{"GET /pub HTTP/1.1", "public .example", "public .example", true},
		// A fixed edge may forward the valid part of a bad :authority.
		{"GET /pub HTTP/1.1", "public.example", "user@public.example", false},
	} {
		q := recorded{line: tc.line, hosts: []string{tc.host}}
		if got := mappingDefect(q, tc.authority); (got != "") != tc.bad {
			t.Errorf("mappingDefect(%q, Host %q, :authority %q) = %q, want bad=%v", tc.line, tc.host, tc.authority, got, tc.bad)
		}
	}
	if d := mappingDefect(recorded{line: "GET /pub HTTP/1.1", hosts: []string{"a", "a"}}, "a"); d == "" {
		t.Error("two Host fields not a defect")
	}
}

func TestJudgeAdmin(t *testing.T) {
	for line, want := range map[string]bool{
		"GET /admin/x HTTP/1.1":              true,
		"GET /pub/../admin/x HTTP/1.1":       true,
		"GET //admin/x HTTP/1.1":             true,
		"GET /%61dmin/x?q HTTP/1.1":          true,
		"GET /pub/%2e%2E/admin/x HTTP/1.1":   true,
		"GET /assets/../admin/x HTTP/1.1":    true,
		"GET /admin HTTP/1.1":                true,
		"GET /admin%2Fx HTTP/1.1":            false,
		"GET /administrator HTTP/1.1":        false,
		"GET /pub/x HTTP/1.1":                false,
		"GET /pub/%252e%252e/admin HTTP/1.1": false,
		"GET * HTTP/1.1":                     false,
	} {
		if got, detail := judgeAdmin(recorded{line: line}); got != want {
			t.Errorf("judgeAdmin(%q) = %v (%s), want %v", line, got, detail, want)
		}
	}
	if _, d := judgeAdmin(recorded{line: "GET /admin%2fx HTTP/1.1"}); !strings.Contains(d, "%2F is decoded") {
		t.Errorf("judgeAdmin(/admin%%2fx) detail %q does not say %%2F", d)
	}
	if got := decodeUnreserved("/%61%2F%7e%2e%zz%4"); got != "/a%2F~.%zz%4" {
		t.Errorf("decodeUnreserved = %q", got)
	}
}

func TestTally(t *testing.T) {
	var none tally
	if res, _ := none.report("bad", "clean"); res != "bad: 0 of 0; refused: 0; answered by the edge: 0; clean: 0" {
		t.Errorf("empty tally: %q", res)
	}
	var tl tally
	bad := func(q recorded) (bool, string) { return q.line == "bad", q.line }
	tl.add(controlForwarded, "control", []recorded{{line: "ok"}}, "200", bad)
	tl.add(controlRefused, "control2", nil, "403", bad)
	tl.add(attack, "a", []recorded{{line: "bad"}}, "200", bad)
	tl.add(attack, "b", nil, "RST PROTOCOL_ERROR", bad)
	tl.add(attack, "c", nil, "RST PROTOCOL_ERROR", bad)
	tl.add(attack, "d", nil, "400", bad)
	tl.add(attack, "e", []recorded{{line: "ok"}}, "200", bad)
	tl.add(attack, "f", nil, "200", bad)
	res, notes := tl.report("malformed", "clean")
	if want := "malformed: 1 of 6; refused: 3 (RST PROTOCOL_ERROR ×2, 400 ×1); answered by the edge: 1 (200 ×1); clean: 1"; res != want {
		t.Errorf("result %q\nwant   %q", res, want)
	}
	if want := "control: ok → 200; control2: 403; a: bad → 200; b: RST PROTOCOL_ERROR; c: RST PROTOCOL_ERROR; d: 400; e: ok → 200; f: 200"; notes != want {
		t.Errorf("notes %q\nwant  %q", notes, want)
	}
	// Controls that end otherwise say so first.
	var failed tally
	failed.add(controlForwarded, "pub", nil, "RST PROTOCOL_ERROR", bad)
	failed.add(controlRefused, "admin", []recorded{{line: "ok"}}, "200", bad)
	failed.add(controlForwarded, "fine", []recorded{{line: "ok"}}, "200", bad)
	failed.add(controlForwarded, "bad", []recorded{{line: "bad"}}, "200", bad)
	if res, _ := failed.report("x", "y"); res != "control failed (pub, admin, bad): x: 0 of 0; refused: 0; answered by the edge: 0; y: 0" {
		t.Errorf("failed controls: %q", res)
	}
}

// TestParams: both modes set every bound and size (a zero would make a
// scenario end at once and report it as a result).
func TestParams(t *testing.T) {
	for _, quick := range []bool{false, true} {
		p := reflect.ValueOf(paramsFor(&options{quick: quick}))
		for i := range p.NumField() {
			if p.Field(i).IsZero() {
				t.Errorf("quick=%v: params.%s is zero", quick, p.Type().Field(i).Name)
			}
		}
	}
}
