package main

import (
	"log/slog"
	"time"

	"github.com/simdedge/simdedge/server"
)

// drainDelay turns the admin /ready to 503 and then runs
// timeouts.drain_delay, before the drain closes the listeners: for that
// long every request is still accepted and served, while clients are told
// to go (server.StartDrain: Connection: close on HTTP/1.1, GOAWAY on
// HTTP/2), so that load balancers watching /ready, and clients with
// long-lived connections, move away before anything is refused. The
// clients are told first, so a request sent after /ready answered 503 is
// already told. A second SIGTERM or SIGINT ends the process at once
// (signalContext), as it does during the drain.
func drainDelay(srv *server.Server, adm *adminListener, delay time.Duration, log *slog.Logger) {
	if delay <= 0 {
		adm.setDraining()
		return
	}
	srv.StartDrain()
	adm.setDraining()
	log.Info("drain delay: serving with /ready at 503", "for", delay)
	time.Sleep(delay)
}
