package main

import (
	"errors"
	"log/slog"
	"os"
	"os/signal"
	"reflect"
	"syscall"

	"github.com/simdedge/simdedge/server/accesslog"
	"github.com/simdedge/simdedge/server/config"
)

// openAccessLog opens the configured access log (nil when off) and starts
// reopening it on SIGUSR1, the signal logrotate's postrotate sends. stop
// ends the signal watch and closes the log, writing what it holds.
func openAccessLog(cfg *config.Config, log *slog.Logger) (l *accesslog.Log, stop func(), err error) {
	o, ok := cfg.AccessLogOptions()
	if !ok {
		return nil, func() {}, nil
	}
	l, err = accesslog.Open(o)
	if err != nil {
		return nil, nil, errors.New("access_log.path: " + err.Error())
	}
	usr1 := make(chan os.Signal, 1)
	signal.Notify(usr1, syscall.SIGUSR1)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-usr1:
				l.Reopen()
				log.Info("access log reopened", "path", o.Path)
			case <-done:
				return
			}
		}
	}()
	stop = func() {
		signal.Stop(usr1)
		close(done)
		if err := l.Close(); err != nil {
			log.Warn("access log close", "err", err)
		}
		if n := l.Dropped(); n > 0 {
			log.Warn("access log lines dropped (the sink stalled)", "dropped", n)
		}
	}
	return l, stop, nil
}

// checkObserveReloadable refuses reloading the access log, request-ID and
// trace keys: the server reads them when it starts (the log file is open,
// the connections hold its shards).
func checkObserveReloadable(prev, next *config.Config) error {
	p, n := prev.WithDefaults(), next.WithDefaults()
	switch {
	case !reflect.DeepEqual(p.AccessLog, n.AccessLog):
		return unreloadable("access_log", "")
	case !reflect.DeepEqual(p.RequestID, n.RequestID):
		return unreloadable("request_id", "")
	case !reflect.DeepEqual(p.Trace, n.Trace):
		return unreloadable("trace", "")
	}
	return nil
}
