package main

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

func TestRunURL(t *testing.T) {
	in := strings.Join([]string{
		`{"input": "https://EXAMPLE.com:443/a/../b?c#d", "base": null}`,
		`{"input": "../x", "base": "http://h/a/b/c"}`,
		`{"input": "http://[::1", "base": null}`,
		`{"input": "x", "base": "not a url"}`,
		`{not json`,
		``,
	}, "\n")
	var out, errOut bytes.Buffer
	if code := runURL(nil, strings.NewReader(in), &out, &errOut); code != 1 {
		t.Errorf("exit status %d, want 1 (one malformed line)", code)
	}
	if !strings.Contains(errOut.String(), "line 5") {
		t.Errorf("stderr %q does not name line 5", errOut.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("got %d output lines, want 4:\n%s", len(lines), out.String())
	}
	var got []map[string]any
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("output line %q: %v", l, err)
		}
		got = append(got, m)
	}
	if got[0]["href"] != "https://example.com/b?c#d" || got[0]["origin"] != "https://example.com" ||
		got[0]["port"] != "" || got[0]["base"] != nil || got[0]["pathname"] != "/b" {
		t.Errorf("line 1: %v", got[0])
	}
	if got[1]["href"] != "http://h/a/x" || got[1]["base"] != "http://h/a/b/c" {
		t.Errorf("line 2: %v", got[1])
	}
	for i := 2; i < 4; i++ {
		if got[i]["failure"] != true || got[i]["href"] != nil {
			t.Errorf("line %d: want failure only: %v", i+1, got[i])
		}
	}
	for _, k := range []string{"input", "base", "href", "origin", "protocol", "username", "password", "host", "hostname", "port", "pathname", "search", "hash"} {
		if _, ok := got[0][k]; !ok {
			t.Errorf("line 1 lacks %q", k)
		}
	}
}

// TestRunURLWPT feeds every urltestdata.json case through the command and
// compares each output line with the expected components.
func TestRunURLWPT(t *testing.T) {
	data, err := os.ReadFile("../../parse/url/testdata/wpt/urltestdata.json")
	if err != nil {
		t.Skipf("WPT data not available: %v", err)
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	var in bytes.Buffer
	var want []map[string]any
	for _, m := range raw {
		if m[0] != '{' {
			continue
		}
		var tc map[string]any
		if err := json.Unmarshal(m, &tc); err != nil {
			t.Fatal(err)
		}
		line, _ := json.Marshal(map[string]any{"input": tc["input"], "base": tc["base"]})
		in.Write(append(line, '\n'))
		want = append(want, tc)
	}
	var out, errOut bytes.Buffer
	if code := runURL(nil, &in, &out, &errOut); code != 0 {
		t.Fatalf("exit status %d: %s", code, errOut.String())
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d output lines for %d inputs", len(lines), len(want))
	}
	for i, l := range lines {
		var got map[string]any
		if err := json.Unmarshal([]byte(l), &got); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		w := want[i]
		if w["failure"] == true {
			if got["failure"] != true {
				t.Errorf("line %d (%v): want failure, got %v", i+1, w["input"], got)
			}
			continue
		}
		for _, k := range []string{"input", "base", "href", "protocol", "username", "password", "host", "hostname", "port", "pathname", "search", "hash", "origin"} {
			wv, ok := w[k]
			if !ok {
				continue
			}
			if got[k] != wv {
				t.Errorf("line %d (%v): %s = %v, want %v", i+1, w["input"], k, got[k], wv)
			}
		}
	}
}
