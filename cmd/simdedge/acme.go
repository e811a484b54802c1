package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"

	"github.com/simdedge/simdedge/server/config"
	"github.com/simdedge/simdedge/server/edgeacme"
	"github.com/simdedge/simdedge/server/edgetls"
)

// errACMEReload refuses a reload that changes a kept listener's acme block:
// certmagic's manager starts once, with its storage and account.
var errACMEReload = errors.New("tls.acme cannot change on a listener that stays (restart to change it)")

// acmeManagers are the ACME managers of the TLS listeners, by listenerID.
// The redirect listeners ask every one of them for HTTP-01 answers, from
// their connections' goroutines, so the list they read is a snapshot
// behind an atomic pointer.
type acmeManagers struct {
	mu   sync.Mutex
	byID map[string]acmeEntry
	list atomic.Pointer[[]*edgeacme.Manager]
}

type acmeEntry struct {
	m   *edgeacme.Manager
	cfg *config.ACME
}

// HTTPChallenge asks each manager (server.HTTPChallenger).
func (a *acmeManagers) HTTPChallenge(host, path []byte) ([]byte, bool) {
	ms := a.list.Load()
	if ms == nil {
		return nil, false
	}
	for _, m := range *ms {
		if b, ok := m.HTTPChallenge(host, path); ok {
			return b, true
		}
	}
	return nil, false
}

// set records (m non-nil) or stops and forgets (m nil) id's manager.
// Called with mu held.
func (a *acmeManagers) set(id string, e acmeEntry) {
	if old, ok := a.byID[id]; ok && old.m != e.m {
		old.m.Stop()
	}
	if e.m == nil {
		delete(a.byID, id)
	} else {
		if a.byID == nil {
			a.byID = map[string]acmeEntry{}
		}
		a.byID[id] = e
	}
	list := make([]*edgeacme.Manager, 0, len(a.byID))
	for _, e := range a.byID {
		list = append(list, e.m)
	}
	a.list.Store(&list)
}

// acmeOptions are l's ACME options; tlsAddr is the address l listens on
// (as opened), empty for `simdedge check`.
func acmeOptions(l config.Listener, tlsAddr string, log *slog.Logger) edgeacme.Options {
	a := l.TLS.ACME
	o := edgeacme.Options{Email: a.Email, Directory: a.Directory, Domains: a.Domains, Storage: a.Storage, CA: a.CA, Logger: log}
	if a.Allows(config.ChallengeTLSALPN01) {
		o.TLSALPNAddress = tlsAddr
	}
	if h := a.HTTPChallengeAddress(); h != "" && a.Allows(config.ChallengeHTTP01) {
		// A port the kernel picks is unknown to the CA, which validates
		// on the port it is told of (80 in production).
		if _, port, err := net.SplitHostPort(h); err == nil && port != "0" {
			o.HTTPAddress = h
		} else if log != nil {
			log.Warn("acme: http-01 needs the redirect_to_https listener on a fixed port; using tls-alpn-01 only", "listener", l.Address)
		}
	}
	return o
}

// openACME starts the ACME manager of l, listening on addr, and attaches
// it to l's Store: its names' certificates come from it from now on.
func (s *listenerSet) openACME(l config.Listener, id, addr string, st *edgetls.Store, log *slog.Logger) error {
	m, err := edgeacme.New(acmeOptions(l, addr, log))
	if err != nil {
		return fmt.Errorf("cannot start acme on %s: %w", l.Address, err)
	}
	if err := m.Start(); err != nil {
		return fmt.Errorf("cannot start acme on %s: %w", l.Address, err)
	}
	st.SetManager(m.GetCertificate)
	s.acme.mu.Lock()
	s.acme.set(id, acmeEntry{m: m, cfg: l.TLS.ACME})
	s.acme.mu.Unlock()
	return nil
}

// adoptACME moves fresh's managers into s (a reload's new listeners).
func (s *listenerSet) adoptACME(fresh *listenerSet) {
	fresh.acme.mu.Lock()
	defer fresh.acme.mu.Unlock()
	s.acme.mu.Lock()
	defer s.acme.mu.Unlock()
	for id, e := range fresh.acme.byID {
		s.acme.set(id, e)
	}
	fresh.acme.byID = nil
}

// stopACME stops the managers of the listeners ids (removed by a reload,
// or all of them at exit when ids is nil).
func (s *listenerSet) stopACME(ids []string) {
	s.acme.mu.Lock()
	defer s.acme.mu.Unlock()
	if ids == nil {
		for id := range s.acme.byID {
			ids = append(ids, id)
		}
	}
	for _, id := range ids {
		s.acme.set(id, acmeEntry{})
	}
}

// checkACMEReload refuses a change of a kept listener's acme block.
func (s *listenerSet) checkACMEReload(l config.Listener, id string) error {
	s.acme.mu.Lock()
	e, ok := s.acme.byID[id]
	s.acme.mu.Unlock()
	var was *config.ACME
	if ok {
		was = e.cfg
	}
	if !was.Equal(l.TLS.ACME) {
		return errACMEReload
	}
	return nil
}
