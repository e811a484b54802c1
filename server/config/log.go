package config

import (
	"time"

	"go.yaml.in/yaml/v3"
)

// The server's own log (not the access log, observe.go):
//
//	log:
//	  level: info     # debug, info, warn or error
//	  format: json    # json or text (slog's key=value)
//
// It goes to standard error. Durations in it are written as Go durations
// ("10s"), in both formats. SIGHUP applies a new level; a new format is
// refused by name (the handler is built once, at start-up, and every
// part of the server holds its logger).

// Defaults of the log keys.
const (
	DefaultLogLevel  = "info"
	DefaultLogFormat = "json"
)

// Log is `log:`, the server's own log.
type Log struct {
	// Level is the least severe level written: debug, info, warn or
	// error (default info).
	Level string `yaml:"level"`
	// Format is json (one object per line) or text (key=value pairs),
	// default json.
	Format string `yaml:"format"`
}

// LogLevels and LogFormats are the accepted values, in order.
var (
	LogLevels  = []string{"debug", "info", "warn", "error"}
	LogFormats = []string{"json", "text"}
)

func (l Log) withDefaults() Log {
	if l.Level == "" {
		l.Level = DefaultLogLevel
	}
	if l.Format == "" {
		l.Format = DefaultLogFormat
	}
	return l
}

func (d *decoder) log(v *yaml.Node, key string, dst *Log) {
	oneOf := func(field *string, allowed []string, msg string) func(*yaml.Node, string) {
		return func(v *yaml.Node, k string) {
			d.str(field)(v, k)
			if v.Kind != yaml.ScalarNode {
				return
			}
			for _, a := range allowed {
				if *field == a {
					return
				}
			}
			d.fail(v, k, msg)
		}
	}
	d.fields(v, key, map[string]func(*yaml.Node, string){
		"level":  oneOf(&dst.Level, LogLevels, "must be debug, info, warn or error"),
		"format": oneOf(&dst.Format, LogFormats, "must be json or text"),
	})
}

// durationOrZero is duration for keys where 0 means "off" (drain_delay).
func (d *decoder) durationOrZero(dst *Duration) func(*yaml.Node, string) {
	return func(v *yaml.Node, key string) {
		t, err := time.ParseDuration(v.Value)
		if v.Kind != yaml.ScalarNode || err != nil {
			d.fail(v, key, `must be a duration such as "10s" or "1m30s"`)
			return
		}
		if t < 0 {
			d.fail(v, key, "must not be negative")
			return
		}
		*dst = Duration(t)
	}
}
