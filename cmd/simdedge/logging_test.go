package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/simdedge/simdedge/server/config"
)

// TestLoggerFormats: log.format and log.level build the handler, and a
// duration is written as Go writes it in both formats (it was
// "for":10000000000 in JSON), in groups too.
func TestLoggerFormats(t *testing.T) {
	for _, tc := range []struct {
		yaml string
		want []string
		not  []string
	}{
		{"", []string{`"msg":"x"`, `"for":"10s"`, `"g":{"d":"1.5ms"}`}, []string{"debug-line", "10000000000"}},
		{"log: {format: text, level: debug}", []string{"msg=x", "for=10s", "g.d=1.5ms", "msg=debug-line"}, []string{"{"}},
		{"log: {level: error}", nil, []string{`"msg":"x"`}},
	} {
		cfg, err := config.Parse([]byte(tc.yaml + "\nroutes: [{respond: {status: 200}}]\n"))
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		log, _ := newLogger(cfg, &b)
		log.Debug("debug-line")
		log.Info("x", "for", 10*time.Second)
		log.WithGroup("g").Info("x", "d", 1500*time.Microsecond)
		out := b.String()
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%q: no %s in %s", tc.yaml, w, out)
			}
		}
		for _, n := range tc.not {
			if strings.Contains(out, n) {
				t.Errorf("%q: %s in %s", tc.yaml, n, out)
			}
		}
	}
}

// TestLogLevelReload: SIGHUP applies a new log.level (a warn-level server
// logs no "serving"; after the reload to info it logs "reloaded"), and
// refuses a new log.format by name, keeping the running one.
func TestLogLevelReload(t *testing.T) {
	file := filepath.Join(t.TempDir(), "c.yaml")
	writeFile(t, file, "log: {level: warn}\n"+routeV("one"))
	_, logs := startServeLogs(t, "-config", file, "-listen", "127.0.0.1:0")
	if strings.Contains(logs.String(), `"msg":"serving"`) {
		t.Fatalf("an info line at level warn: %s", logs.String())
	}
	writeFile(t, file, "log: {level: info}\n"+routeV("two"))
	hup(t, logs)
	if !strings.Contains(logs.String(), `"msg":"reloaded"`) {
		t.Fatalf("level info not applied by the reload: %s", logs.String())
	}
	writeFile(t, file, "log: {level: info, format: text}\n"+routeV("three"))
	hup(t, logs)
	if !strings.Contains(logs.String(), "log.format: cannot be changed by a reload") {
		t.Fatalf("a new format not refused by name: %s", logs.String())
	}
}
