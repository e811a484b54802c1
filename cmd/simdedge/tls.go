package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"time"

	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/config"
	"github.com/simdedge/simdedge/server/edgeacme"
	"github.com/simdedge/simdedge/server/edgetls"
)

// openTLS loads a TLS listener's certificates into the Store its sockets
// share, logs what `simdedge check` would warn about, and records the
// Store under the listener's listenerID for the reload.
func (s *listenerSet) openTLS(l config.Listener, id string, log *slog.Logger) (*edgetls.Store, error) {
	o := l.TLS.Options()
	st, err := edgetls.New(o)
	if err != nil {
		return nil, fmt.Errorf("cannot start tls listener on %s: %w", l.Address, err)
	}
	warnings, err := edgetls.Check(o, time.Now())
	for _, w := range warnings {
		log.Warn("tls certificate", "listener", l.Address, "warning", w)
	}
	if err != nil {
		log.Error("tls certificate", "listener", l.Address, "err", err)
	}
	if s.tlsStores == nil {
		s.tlsStores = map[string]*edgetls.Store{}
	}
	s.tlsStores[id] = st
	return st, nil
}

// serveKind serves one kernel TCP listener: TLS terminated, redirecting to
// https, or plain on its engine.
func (s *listenerSet) serveKind(srv *server.Server, l tcpListener) error {
	switch {
	case l.tls != nil:
		return srv.ServeTLS(l.l, l.engine, server.TLSOptions{Config: l.tls.TLSConfig(), HandshakeTimeout: l.tls.HandshakeTimeout()})
	case l.redirect:
		return srv.ServeStream(server.RedirectHTTPSWithChallenges(l.l, s.httpsPort(), &s.acme))
	}
	if l.h2c {
		srv.EnableH2C(l.l)
	}
	return srv.ServeTCP(l.l, l.engine)
}

// httpsPort is the port of the first TLS listener, as opened (a
// configured port 0 is the one the kernel chose).
func (s *listenerSet) httpsPort() string {
	for _, l := range s.tcp {
		if l.tls != nil {
			_, port, _ := net.SplitHostPort(l.l.Addr().String())
			return port
		}
	}
	return ""
}

// checkTLSReload loads the certificates of every TLS listener cfg keeps
// (by listenerID) without applying them, so that a reload refuses
// a bad file before it changes anything; applyTLS then swaps them in.
func (s *listenerSet) checkTLSReload(cfg *config.Config) error {
	var errs []error
	for i, l := range cfg.EffectiveListeners() {
		if l.TLS == nil || s.tlsStores[listenerID(l, i)] == nil {
			continue
		}
		if err := s.checkACMEReload(l, listenerID(l, i)); err != nil {
			errs = append(errs, fmt.Errorf("listener %s: %w", l.Address, err))
		}
		if _, err := edgetls.New(l.TLS.Options()); err != nil {
			errs = append(errs, fmt.Errorf("listener %s: %w", l.Address, err))
		}
	}
	return errors.Join(errs...)
}

// applyTLS reloads each TLS listener's Store from cfg (the reload calls it
// after checkTLSReload, when it switches everything else).
func (s *listenerSet) applyTLS(cfg *config.Config) error {
	var errs []error
	for i, l := range cfg.EffectiveListeners() {
		st := s.tlsStores[listenerID(l, i)]
		if l.TLS == nil || st == nil {
			continue
		}
		if err := st.Reload(l.TLS.Options()); err != nil {
			errs = append(errs, fmt.Errorf("listener %s: %w", l.Address, err))
		}
	}
	return errors.Join(errs...)
}

// checkTLS validates every TLS listener's files for `simdedge check`:
// pairs that load and match, none expired; warnings go to w, including
// upstreams that skip certificate verification.
func checkTLS(cfg *config.Config, w io.Writer) error {
	var errs []error
	for _, l := range cfg.EffectiveListeners() {
		if l.TLS == nil {
			continue
		}
		warnings, err := edgetls.Check(l.TLS.Options(), time.Now())
		for _, m := range warnings {
			fmt.Fprintf(w, "simdedge: warning: listener %s: %s\n", l.Address, m)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("listener %s: %w", l.Address, err))
		}
		if l.TLS.ACME != nil {
			if err := edgeacme.Check(acmeOptions(l, "", nil)); err != nil {
				errs = append(errs, fmt.Errorf("listener %s: %w", l.Address, err))
			}
		}
	}
	// Upstream TLS files were loaded by Build; skipping verification is
	// legal but said out loud, as at start-up.
	for _, u := range cfg.Upstreams {
		if u.TLS != nil && u.TLS.InsecureSkipVerify {
			fmt.Fprintf(w, "simdedge: warning: upstream %s: tls.insecure_skip_verify is set, certificates are not verified\n", u.Name)
		}
	}
	return errors.Join(errs...)
}
