package edgeacme

import (
	"context"
	"log/slog"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// zapToSlog makes certmagic's zap logger write to log, so that its
// obtain, renew and challenge lines come out with the server's own (JSON)
// logs instead of zap's console format on stderr.
func zapToSlog(log *slog.Logger) *zap.Logger {
	return zap.New(slogCore{log: log})
}

// slogCore is a zapcore.Core over a slog.Logger; fields added by With
// are kept as slog attributes.
type slogCore struct {
	log   *slog.Logger
	attrs []slog.Attr
}

func (c slogCore) Enabled(l zapcore.Level) bool {
	return c.log.Enabled(context.Background(), slogLevel(l))
}

func (c slogCore) With(fs []zapcore.Field) zapcore.Core {
	return slogCore{log: c.log, attrs: append(append([]slog.Attr(nil), c.attrs...), attrs(fs)...)}
}

func (c slogCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(e.Level) {
		return ce.AddCore(e, c)
	}
	return ce
}

func (c slogCore) Write(e zapcore.Entry, fs []zapcore.Field) error {
	as := append(append([]slog.Attr(nil), c.attrs...), attrs(fs)...)
	msg := e.Message
	if e.LoggerName != "" {
		msg = e.LoggerName + ": " + msg
	}
	c.log.LogAttrs(context.Background(), slogLevel(e.Level), "acme: "+msg, as...)
	return nil
}

func (slogCore) Sync() error { return nil }

// attrs encodes zap fields the way zap's own encoders see them.
func attrs(fs []zapcore.Field) []slog.Attr {
	enc := zapcore.NewMapObjectEncoder()
	for _, f := range fs {
		f.AddTo(enc)
	}
	out := make([]slog.Attr, 0, len(enc.Fields))
	for k, v := range enc.Fields {
		out = append(out, slog.Any(k, v))
	}
	return out
}

func slogLevel(l zapcore.Level) slog.Level {
	switch {
	case l <= zapcore.DebugLevel:
		return slog.LevelDebug
	case l == zapcore.InfoLevel:
		return slog.LevelInfo
	case l == zapcore.WarnLevel:
		return slog.LevelWarn
	}
	return slog.LevelError
}
