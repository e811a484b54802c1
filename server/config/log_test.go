package config

import (
	"strings"
	"testing"
	"time"
)

// TestLogAndDrainDelayKeys: log and timeouts.drain_delay parse, take
// their defaults (info, json, 0) and refuse bad values by key.
func TestLogAndDrainDelayKeys(t *testing.T) {
	cfg, err := Parse([]byte("log: {level: debug, format: text}\ntimeouts: {drain_delay: 5s}\nroutes:\n  - respond: {status: 200}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Log.Level != "debug" || cfg.Log.Format != "text" || time.Duration(cfg.Timeouts.DrainDelay) != 5*time.Second {
		t.Errorf("parsed log %+v, drain_delay %v", cfg.Log, time.Duration(cfg.Timeouts.DrainDelay))
	}
	def, err := Parse([]byte("timeouts: {drain_delay: 0s}\nroutes:\n  - respond: {status: 200}\n"))
	if err != nil {
		t.Fatalf("drain_delay: 0s refused: %v", err)
	}
	if d := def.WithDefaults(); d.Log.Level != DefaultLogLevel || d.Log.Format != DefaultLogFormat || d.Timeouts.DrainDelay != 0 {
		t.Errorf("defaults: log %+v, drain_delay %v", d.Log, d.Timeouts.DrainDelay)
	}
	out, err := def.WithDefaults().YAML()
	if err != nil || !strings.Contains(string(out), "drain_delay: 0s") || !strings.Contains(string(out), "level: info") {
		t.Errorf("effective YAML lacks drain_delay or log: %v\n%s", err, out)
	}
	for _, tc := range []struct{ yaml, want string }{
		{"log: {level: verbose}", "log.level"},
		{"log: {format: logfmt}", "log.format"},
		{"log: {colour: true}", "log.colour"},
		{"log: {level: [debug]}", "log.level"},
		{"timeouts: {drain_delay: -1s}", "timeouts.drain_delay"},
		{"timeouts: {drain_delay: soon}", "timeouts.drain_delay"},
	} {
		_, err := Parse([]byte(tc.yaml + "\nroutes:\n  - respond: {status: 200}\n"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one naming %s", tc.yaml, err, tc.want)
		}
	}
}
