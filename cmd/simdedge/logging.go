package main

import (
	"io"
	"log/slog"

	"github.com/simdedge/simdedge/server/config"
)

// newLogger builds the server's own log from `log:` (server/config/log.go)
// on w, with its level in a LevelVar that a reload sets (setLogLevel).
func newLogger(cfg *config.Config, w io.Writer) (*slog.Logger, *slog.LevelVar) {
	c := cfg.WithDefaults().Log
	level := &slog.LevelVar{}
	level.Set(logLevel(c.Level))
	o := &slog.HandlerOptions{Level: level, ReplaceAttr: durationText}
	if c.Format == "text" {
		return slog.New(slog.NewTextHandler(w, o)), level
	}
	return slog.New(slog.NewJSONHandler(w, o)), level
}

// durationText writes a time.Duration as Go writes it ("10s", "1.5ms"):
// slog's JSON handler writes nanoseconds ("for":10000000000), which a
// reader has to divide, and its text handler would already agree.
func durationText(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindDuration {
		a.Value = slog.StringValue(a.Value.Duration().String())
	}
	return a
}

// logLevel maps a validated level name to slog's level.
func logLevel(name string) slog.Level {
	switch name {
	case "debug":
		return slog.LevelDebug
	case "warn":
		return slog.LevelWarn
	case "error":
		return slog.LevelError
	}
	return slog.LevelInfo
}

// checkLogReloadable refuses a new log format: the handler is built once
// and every part of the server holds the logger. The level reloads.
func checkLogReloadable(prev, next *config.Config) error {
	if prev.WithDefaults().Log.Format != next.WithDefaults().Log.Format {
		return unreloadable("log.format", "")
	}
	return nil
}
