package gobench

import (
	"os"
	"testing"
)

// testdata/micro.txt and testdata/asm.txt are real `go test -bench` output
// from this repository (bench/micro and asm), trimmed.

func TestParseMicro(t *testing.T) {
	f, err := os.Open("testdata/micro.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, cfg, err := Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 16 {
		t.Fatalf("got %d results, want 16", len(res))
	}
	r := res[0]
	if r.Name != "BenchmarkHTTPRequest/small_get/simdedge" || r.Procs != 2 || r.Iterations != 20 {
		t.Errorf("first result = %q procs %d n %d", r.Name, r.Procs, r.Iterations)
	}
	want := map[string]float64{"ns/op": 7761, "MB/s": 9.53, "B/op": 16, "allocs/op": 0}
	if len(r.Metrics) != len(want) {
		t.Errorf("metrics = %v, want %v", r.Metrics, want)
	}
	for k, v := range want {
		if got, ok := r.Metrics[k]; !ok || got != v {
			t.Errorf("metric %s = %v (present %v), want %v", k, got, ok, v)
		}
	}
	// A b.ReportMetric unit in the middle of the standard ones.
	var url *Result
	for i := range res {
		if res[i].Name == "BenchmarkURLParse/kasztp/net_url" {
			url = &res[i]
			break
		}
	}
	if url == nil {
		t.Fatal("BenchmarkURLParse/kasztp/net_url missing")
	}
	if url.Metrics["ns/URL"] != 427.0 || url.Metrics["allocs/op"] != 48484 {
		t.Errorf("URL metrics = %v", url.Metrics)
	}
	keys := map[string]string{}
	for _, c := range cfg {
		keys[c.Key] = c.Value
	}
	if keys["goos"] != "linux" || keys["pkg"] != "github.com/simdedge/simdedge/bench/micro" || keys["cpu"] == "" {
		t.Errorf("config = %v", cfg)
	}
	if _, ok := keys["PASS"]; ok {
		t.Error("PASS parsed as config")
	}
}

func TestParseAsm(t *testing.T) {
	f, err := os.Open("testdata/asm.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, _, err := Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 3 {
		t.Fatalf("got %d results, want 3", len(res))
	}
	area, cse, impl := Parts(res[2].Name)
	if area != "Classify" || cse != "64" || impl != "level=avx512" {
		t.Errorf("Parts(%q) = %q %q %q", res[2].Name, area, cse, impl)
	}
	if res[2].Metrics["ns/op"] != 7.003 {
		t.Errorf("ns/op = %v", res[2].Metrics["ns/op"])
	}
}

func TestParseLineRejects(t *testing.T) {
	for _, l := range []string{
		"",
		"PASS",
		"ok  	github.com/x	0.1s",
		"BenchmarkX",
		"BenchmarkX-2 notanumber 1 ns/op",
		"BenchmarkX-2 10 1",
		"BenchmarkX-2 10 abc ns/op",
		"--- FAIL: BenchmarkX",
	} {
		if _, err := ParseLine(l); err == nil {
			t.Errorf("ParseLine(%q) accepted", l)
		}
	}
}

func TestSplitProcs(t *testing.T) {
	tests := []struct {
		in    string
		name  string
		procs int
	}{
		{"BenchmarkA-8", "BenchmarkA", 8},
		{"BenchmarkA", "BenchmarkA", 1},
		{"BenchmarkA/x-y", "BenchmarkA/x-y", 1},
		{"BenchmarkA/x-1/b-4", "BenchmarkA/x-1/b", 4},
		{"BenchmarkA/x-1/b", "BenchmarkA/x-1/b", 1},
	}
	for _, tt := range tests {
		n, p := splitProcs(tt.in)
		if n != tt.name || p != tt.procs {
			t.Errorf("splitProcs(%q) = %q, %d", tt.in, n, p)
		}
	}
}

func TestParts(t *testing.T) {
	tests := []struct{ in, area, cse, impl string }{
		{"BenchmarkURLParse/kasztp/net_url", "URLParse", "kasztp", "net_url"},
		{"BenchmarkURLParseAlloc/kasztp", "URLParseAlloc", "kasztp", ""},
		{"BenchmarkJSON", "JSON", "", ""},
		{"BenchmarkLoad/origin/a/b/nginx", "Load", "origin/a/b", "nginx"},
	}
	for _, tt := range tests {
		a, c, i := Parts(tt.in)
		if a != tt.area || c != tt.cse || i != tt.impl {
			t.Errorf("Parts(%q) = %q %q %q", tt.in, a, c, i)
		}
	}
}
