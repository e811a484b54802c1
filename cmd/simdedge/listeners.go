package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"syscall"

	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/config"
	"github.com/simdedge/simdedge/server/edgetls"
)

// listenerSet is every listener a configuration opened, ready to serve.
type listenerSet struct {
	// tcp are the kernel TCP listeners, each served by its engine.
	tcp      []tcpListener
	streams  []server.StreamListener
	messages []server.MessageListener
	// closers release what outlives the listeners' own Close: the XDP
	// program's attachment, RDMA fabrics. They run after the server has
	// drained, in reverse order of opening.
	closers []io.Closer
	addrs   []string
	wg      sync.WaitGroup
	// fatal receives the first error a listener's Serve call ends with,
	// other than the server closing or the listener being stopped by a
	// reload (capacity 1).
	fatal chan error
	// tlsStores are the TLS listeners' certificates by configured
	// address, which a reload swaps (tls.go).
	tlsStores map[string]*edgetls.Store
	// acme are the TLS listeners' ACME managers (acme.go).
	acme acmeManagers
	// inherited are the sockets systemd passed that no listener has taken
	// yet (activation.go); nil without socket activation.
	inherited *inheritedSockets
	// udp are the HTTP/3 sockets of the TLS listeners with http3 (http3.go).
	udp []udpListener
	// h3 is the configuration's http3 block, for the sockets it opens.
	h3 config.HTTP3
}

type tcpListener struct {
	l      net.Listener
	engine server.Engine
	// spec is the listener's listenerID (a reload compares these), addr
	// the address it listens on; first: the first socket of the address
	// (with loops > 1 the others share it).
	spec, addr string
	first      bool
	// tls terminates TLS (nil: plain); redirect answers 308 to https.
	tls      *edgetls.Store
	redirect bool
	// h2c: HTTP/2 with prior knowledge beside HTTP/1.1 (config h2c).
	h2c bool
}

// openListeners opens the configuration's listeners in order, taking a
// socket from inh (systemd socket activation; may be nil) where one is
// bound to a tcp listener's address. If one fails, those already open are
// closed and the error says which listener and why.
func openListeners(cfg *config.Config, log *slog.Logger, inh *inheritedSockets) (*listenerSet, error) {
	s := &listenerSet{inherited: inh, h3: cfg.HTTP3}
	for i, l := range cfg.EffectiveListeners() {
		if err := s.open(l, listenerID(l, i), log); err != nil {
			s.closeListeners()
			s.close()
			return nil, err
		}
	}
	return s, nil
}

// open opens l, which a reload knows as id (listenerID).
func (s *listenerSet) open(l config.Listener, id string, log *slog.Logger) error {
	switch l.Transport {
	case config.TransportTCP:
		// loops > 1: that many sockets on the address with SO_REUSEPORT,
		// each served by its own event loop. The first one's address
		// (its port, when the configuration says 0) is the others'.
		var lc net.ListenConfig
		if l.Loops > 1 {
			if reusePort == nil {
				return fmt.Errorf("cannot listen on %s: loops: %d needs SO_REUSEPORT and epoll (Linux)", l.Address, l.Loops)
			}
			lc.Control = reusePort
		}
		var st *edgetls.Store
		if l.TLS != nil {
			var err error
			if st, err = s.openTLS(l, id, log); err != nil {
				return err
			}
		}
		addr := l.Address
		// A socket systemd passed for the address is the first one; the
		// other loops' sockets join it by SO_REUSEPORT.
		inherited := s.inherited.take(addr)
		for i := range max(l.Loops, 1) {
			var nl net.Listener = inherited
			var err error
			if i > 0 || inherited == nil {
				nl, err = lc.Listen(context.Background(), "tcp", addr)
			}
			if err != nil {
				// (The inherited socket is in s.tcp already: the caller's
				// closeListeners closes it.)
				if inherited != nil && errors.Is(err, syscall.EADDRINUSE) {
					return fmt.Errorf("cannot listen on %s: %w", addr, errInheritedLoops)
				}
				return fmt.Errorf("cannot listen on %s: %v", addr, listenReason(err))
			}
			if i == 0 {
				addr = nl.Addr().String()
				s.addrs = append(s.addrs, addr)
			}
			// PROXY protocol and allow/deny (server.WithPolicy).
			nl = server.WithPolicy(nl, l.Policy())
			s.tcp = append(s.tcp, tcpListener{l: nl, engine: server.Engine(l.Engine), spec: id, addr: addr, first: i == 0,
				tls: st, redirect: l.RedirectToHTTPS, h2c: l.H2C})
		}
		if l.HTTP3 {
			if err := s.openHTTP3(l, id, addr, st, s.h3); err != nil {
				return err
			}
		}
		if st != nil && l.TLS.ACME != nil {
			return s.openACME(l, id, addr, st, log)
		}
	case config.TransportXDP:
		var st *edgetls.Store
		if l.HTTP3 {
			var err error
			if st, err = s.openTLS(l, id, log); err != nil {
				return err
			}
		}
		x, err := openXDP(*l.XDP, l.HTTP3, log)
		if err != nil {
			return fmt.Errorf("cannot start xdp listener on %s: %w", l.XDP.Interface, err)
		}
		s.closers = append(s.closers, x.closer)
		if x.stream != nil {
			s.streams = append(s.streams, x.stream)
			s.addrs = append(s.addrs, "xdp+tcp://"+x.stream.Addr().String())
		}
		if x.msg != nil {
			s.messages = append(s.messages, x.msg)
			s.addrs = append(s.addrs, "xdp+udp://"+x.msg.Addr().String())
		}
		if x.pc != nil {
			s.addHTTP3(l, id, x.pc, st, s.h3, "xdp+h3://")
		}
	case config.TransportRDMA:
		msg, closer, err := openRDMA(l, log)
		if err != nil {
			return fmt.Errorf("cannot start rdma listener on %s: %w", l.Address, err)
		}
		s.messages = append(s.messages, msg)
		s.addrs = append(s.addrs, "rdma://"+msg.Addr().String())
		if closer != nil {
			s.closers = append(s.closers, closer)
		}
	default:
		return fmt.Errorf("unknown transport %q", l.Transport)
	}
	return nil
}

// applyPaths gives each tcp listener its own path normalisation keys
// (config.Config.ListenerPaths; nil: the top level's), for the
// connections it accepts from now on.
func (s *listenerSet) applyPaths(cfg *config.Config, srv *server.Server) {
	byID := tcpAddrs(cfg)
	for _, l := range s.tcp {
		if cl, ok := byID[l.spec]; ok {
			srv.SetListenerPaths(l.l, cfg.ListenerPaths(cl))
		}
	}
}

// serve serves every listener on its own goroutine; the channel receives
// each one's result (server.ErrServerClosed after Shutdown).
func (s *listenerSet) serve(srv *server.Server) <-chan error {
	s.fatal = make(chan error, 1)
	s.advertise(srv, s.udp, s.tcp)
	for _, l := range s.tcp {
		s.serveTCP(srv, l)
	}
	for _, l := range s.streams {
		s.wg.Add(1)
		go func() { defer s.wg.Done(); s.report(srv.ServeStream(l)) }()
	}
	for _, u := range s.udp {
		s.serveHTTP3(srv, u)
	}
	for _, l := range s.messages {
		s.wg.Add(1)
		go func() { defer s.wg.Done(); s.report(srv.ServeMessages(l)) }()
	}
	return s.fatal
}

func (s *listenerSet) serveTCP(srv *server.Server, l tcpListener) {
	s.wg.Add(1)
	go func() { defer s.wg.Done(); s.report(s.serveKind(srv, l)) }()
}

func (s *listenerSet) report(err error) {
	if errors.Is(err, server.ErrServerClosed) || errors.Is(err, server.ErrListenerStopped) {
		return
	}
	select {
	case s.fatal <- err:
	default:
	}
}

// adopt serves the tcp listeners of fresh (opened by a reload) as part of
// s.
func (s *listenerSet) adopt(fresh *listenerSet, srv *server.Server) {
	for a, st := range fresh.tlsStores {
		if s.tlsStores == nil {
			s.tlsStores = map[string]*edgetls.Store{}
		}
		s.tlsStores[a] = st
	}
	s.adoptACME(fresh)
	s.advertise(srv, fresh.udp, fresh.tcp)
	for _, l := range fresh.tcp {
		s.tcp = append(s.tcp, l)
		if l.first {
			s.addrs = append(s.addrs, l.addr)
		}
		s.serveTCP(srv, l)
	}
	for _, u := range fresh.udp {
		s.udp = append(s.udp, u)
		s.serveHTTP3(srv, u)
	}
}

// stop stops accepting on the tcp listeners configured with the addresses
// specs; their connections are served to their end.
func (s *listenerSet) stop(specs []string, srv *server.Server) {
	gone := map[string]bool{}
	if len(specs) > 0 {
		s.stopACME(specs)
	}
	for _, a := range specs {
		gone[a] = true
		delete(s.tlsStores, a)
	}
	kept := s.tcp[:0]
	for _, l := range s.tcp {
		if !gone[l.spec] {
			kept = append(kept, l)
			continue
		}
		srv.StopListener(l.l)
		if l.first {
			for i, a := range s.addrs {
				if a == l.addr {
					s.addrs = append(s.addrs[:i], s.addrs[i+1:]...)
					break
				}
			}
		}
	}
	s.tcp = kept
	s.stopHTTP3(gone, srv)
}

// wait returns when every serve goroutine has.
func (s *listenerSet) wait() { s.wg.Wait() }

// closeListeners closes listeners that were opened but never served, and
// stops their ACME managers.
func (s *listenerSet) closeListeners() {
	s.stopACME(nil)
	for _, l := range s.tcp {
		l.l.Close()
	}
	for _, l := range s.streams {
		l.Close()
	}
	for _, l := range s.messages {
		l.Close()
	}
	for _, u := range s.udp {
		u.pc.Close()
	}
}

func (s *listenerSet) close() {
	s.stopACME(nil)
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i].Close()
	}
	s.closers = nil
}
