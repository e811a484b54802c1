package main

import (
	"fmt"
	"net"
	"strconv"

	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/config"
	"github.com/simdedge/simdedge/server/edgetls"
)

// udpListener is the HTTP/3 socket of a TLS listener with http3: on the
// same address and port as its TCP sockets, with the same certificates
// (its Store, which a reload swaps) and the listener's Alt-Svc value.
type udpListener struct {
	pc     net.PacketConn
	tls    *edgetls.Store
	spec   string
	opts   server.HTTP3Options
	altSvc string
	addr   string // as listed in the addresses
}

// openHTTP3 opens the UDP socket of listener l (its TCP socket is bound
// to addr already, so a configured port 0 is the kernel's choice for both).
func (s *listenerSet) openHTTP3(l config.Listener, id, addr string, st *edgetls.Store, h3 config.HTTP3) error {
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		return fmt.Errorf("cannot listen on %s (udp, http3): %v", addr, listenReason(err))
	}
	s.addHTTP3(l, id, pc, st, h3, "udp+h3://")
	return nil
}

// addHTTP3 adds pc, a kernel UDP socket or an AF_XDP PacketConn, as the
// HTTP/3 socket of listener l, listed with scheme in the addresses.
func (s *listenerSet) addHTTP3(l config.Listener, id string, pc net.PacketConn, st *edgetls.Store, h3 config.HTTP3, scheme string) {
	_, p, _ := net.SplitHostPort(pc.LocalAddr().String())
	port, _ := strconv.Atoi(p)
	o := h3.Options()
	o.Rules = l.Policy().Rules // the listener's allow and deny
	addr := scheme + pc.LocalAddr().String()
	s.udp = append(s.udp, udpListener{pc: pc, tls: st, spec: id, opts: o, altSvc: h3.AltSvc(port), addr: addr})
	s.addrs = append(s.addrs, addr)
}

// advertise makes the TCP sockets of each listener with HTTP/3 send its
// Alt-Svc field, before they serve.
func (s *listenerSet) advertise(srv *server.Server, udp []udpListener, tcp []tcpListener) {
	for _, u := range udp {
		for _, l := range tcp {
			if l.spec == u.spec {
				srv.SetListenerAltSvc(l.l, u.altSvc)
			}
		}
	}
}

func (s *listenerSet) serveHTTP3(srv *server.Server, u udpListener) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.report(srv.ServeHTTP3(u.pc, u.tls.QUICConfig(), u.opts))
	}()
}

// stopHTTP3 stops the HTTP/3 sockets of the listeners gone (by
// listenerID): their connections drain (GOAWAY) and the socket closes.
func (s *listenerSet) stopHTTP3(gone map[string]bool, srv *server.Server) {
	kept := s.udp[:0]
	for _, u := range s.udp {
		if !gone[u.spec] {
			kept = append(kept, u)
			continue
		}
		srv.StopListener(u.pc)
		for i, a := range s.addrs {
			if a == u.addr {
				s.addrs = append(s.addrs[:i], s.addrs[i+1:]...)
				break
			}
		}
	}
	s.udp = kept
}
