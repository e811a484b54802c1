package server

import (
	"errors"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// Admission: who gets a connection slot when clients compete for them.
//
// Three rules keep one client from holding the server (issue 18, item 2):
//
//   - Limits.MaxConnsPerIP caps the connections of one client address,
//     counted over every listener and engine of a Server; a connection over
//     the cap is closed as soon as it is accepted, before it costs a slot,
//     a goroutine or a buffer.
//   - When a Serve call is at Limits.MaxConns and a new connection arrives,
//     the server closes an idle connection of that Serve call to admit it,
//     as nginx reuses its connections: one waiting for its next request
//     with nothing buffered or in flight (or for its first, once it has
//     been silent for reclaimFreshAfter), chosen among a bounded sample as
//     the one idle longest. A keep-alive client that loses an idle
//     connection this way sees an ordinary keep-alive close and retries.
//     Only when nothing is idle does the new connection wait (held,
//     accepted, while the rest stay in the kernel's backlog).
//   - A connection that has not finished its first request head gets
//     Timeouts.ReadHeader from its accept, with no restart when its first
//     byte arrives; an established one gets Idle, then ReadHeader from the
//     first byte of each head.

// ErrListenerStopped is returned by a Serve call whose listener was closed
// by StopListener (a reload that removed it). Its connections are served
// to their end all the same.
var ErrListenerStopped = errors.New("server: listener stopped")

const (
	// perIPShare is the default MaxConnsPerIP as a share of MaxConns
	// (1/10): one address can then fill at most a tenth of the server, so
	// at least ten distinct addresses are needed to take every slot.
	perIPShare = 10
	// minPerIPDefault is the floor of the default MaxConnsPerIP (but never
	// above MaxConns): a NAT or corporate proxy puts many users behind one
	// address, and browsers open up to 6 connections per host, so 100
	// connections admit some 16 users of one small office even on a server
	// configured with few slots. At the default MaxConns (10,000) the share
	// rules: 1,000 per address, ~160 browsers behind one NAT.
	minPerIPDefault = 100
	// ipv6ClientBits is the prefix counted as one IPv6 client: a host is
	// commonly given a whole /64 and picks addresses from it freely, so
	// counting single addresses would not cap it.
	ipv6ClientBits = 64
	// reclaimScan bounds the connections looked at to find an idle one to
	// close (a Redis-style sampled LRU): an accept at the limit costs at
	// most this many checks, not a walk of every connection.
	reclaimScan = 256
	// reclaimFreshAfter is how long a new connection must have sent
	// nothing before it may be closed for another: a client sends its
	// request within a round trip of connecting, so one accepted a moment
	// ago may have its request on the way (or unread in its socket),
	// while one silent for a second is as idle as a keep-alive one.
	// Shutdown spares such a connection for as long too (sparedFresh):
	// closing it would drop a request the client has sent, which a
	// restart on a socket systemd keeps open must not do.
	reclaimFreshAfter = time.Second
	// reclaimRetry is how often a connection held at the limit looks
	// again for an idle one to replace (connections become idle without
	// telling anyone).
	reclaimRetry = 50 * time.Millisecond
)

// DefaultMaxConnsPerIP is the MaxConnsPerIP used when it is zero: a tenth
// of maxConns, at least min(maxConns, 100); 0 (no cap) when maxConns is 0
// (no limit). See perIPShare and minPerIPDefault for the reasons.
func DefaultMaxConnsPerIP(maxConns int) int {
	if maxConns <= 0 {
		return 0
	}
	return max(maxConns/perIPShare, min(maxConns, minPerIPDefault))
}

// clientKey is the address a connection is counted under for
// MaxConnsPerIP: the IPv4 address, or the IPv6 /64. ok is false for
// transports without IP addresses (in-memory pipes).
func clientKey(a net.Addr) (netip.Addr, bool) {
	var b []byte
	switch ta := a.(type) {
	case *net.TCPAddr:
		b = ta.IP
	case *net.UDPAddr: // HTTP/3 (h3serve.go)
		b = ta.IP
	default:
		return netip.Addr{}, false
	}
	ip, ok := netip.AddrFromSlice(b)
	if !ok {
		return netip.Addr{}, false
	}
	return clientPrefix(ip), true
}

func clientPrefix(ip netip.Addr) netip.Addr {
	ip = ip.Unmap()
	if ip.Is6() {
		p, _ := ip.WithZone("").Prefix(ipv6ClientBits)
		return p.Addr()
	}
	return ip
}

// ipCounts counts the open connections of each client address of a
// Server. One mutex: it is taken twice per connection (accept and close),
// never per request.
type ipCounts struct {
	mu sync.Mutex
	m  map[netip.Addr]int32
}

// acquire counts a connection of ip unless ip has max already (max <= 0:
// no cap).
func (c *ipCounts) acquire(ip netip.Addr, max int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.m[ip]
	if max > 0 && int(n) >= max {
		return false
	}
	if c.m == nil {
		c.m = make(map[netip.Addr]int32)
	}
	c.m[ip] = n + 1
	return true
}

func (c *ipCounts) release(ip netip.Addr) {
	c.mu.Lock()
	if n := c.m[ip] - 1; n > 0 {
		c.m[ip] = n
	} else {
		delete(c.m, ip)
	}
	c.mu.Unlock()
}

// count is ip's number of open connections (tests).
func (c *ipCounts) count(ip netip.Addr) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return int(c.m[ip])
}

// streamSlots are the MaxConns slots of one ServeStream call. Only the
// accept loop takes slots; connection goroutines give them back.
type streamSlots struct {
	n     atomic.Int64
	freed chan struct{} // a slot was given back (capacity 1)
}

func newStreamSlots() *streamSlots {
	return &streamSlots{freed: make(chan struct{}, 1)}
}

func (sl *streamSlots) release() {
	sl.n.Add(-1)
	select {
	case sl.freed <- struct{}{}:
	default:
	}
}

// tryTake takes a slot of sl if one is free under max (<= 0: no limit),
// for a transport that refuses a connection at the limit rather than
// holding it (QUIC, h3serve.go).
func (sl *streamSlots) tryTake(max int64) bool {
	for {
		n := sl.n.Load()
		if max > 0 && n >= max {
			return false
		}
		if sl.n.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// waitSlot takes a slot of sl for a connection just accepted: at once when
// one is free, by closing an idle connection of sl when none is, or else
// after waiting for one. It returns false if the server closes meanwhile.
func (s *Server) waitSlot(sl *streamSlots) bool {
	var t *time.Timer
	for {
		max := int64(s.settings().Limits.MaxConns)
		if max <= 0 || sl.n.Load() < max || s.reclaimIdle(sl) {
			// After a reclaim the count is one over until the
			// closed connection's goroutine ends, moments later.
			sl.n.Add(1)
			if t != nil {
				t.Stop()
			}
			return true
		}
		if s.closing.Load() {
			return false
		}
		if t == nil {
			t = time.NewTimer(reclaimRetry)
		} else {
			t.Reset(reclaimRetry)
		}
		select {
		case <-sl.freed:
		case <-t.C:
		}
	}
}

// reclaimIdle closes the connection of home (a Serve call's slots, or an
// event loop for the connections it handed off) that has waited longest
// for a request, among at most reclaimScan connections of the server. It
// reports whether it closed one.
func (s *Server) reclaimIdle(home any) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	var victim *conn
	var oldest int64
	seen := 0
	freshBefore := freshCutoff(time.Now())
	for c := range s.conns {
		if seen++; seen > reclaimScan {
			break
		}
		if c.home != home {
			continue
		}
		st := c.state.Load()
		if !waiting(st) || sparedFresh(st, freshBefore) {
			continue
		}
		if victim == nil || st < oldest {
			victim, oldest = c, st
		}
	}
	// A parked connection (idlepoll_linux.go) idle longer goes first.
	if g, st := s.idle.oldest(home); g != nil && (victim == nil || st < oldest) {
		return s.idle.reclaim(g, st)
	}
	// The state word holds when the wait began (conn.markIdle): the
	// compare-and-swap fails if the connection has since received a
	// request, and then nothing is closed.
	if victim == nil || !victim.state.CompareAndSwap(oldest, stateWoken) {
		return false
	}
	// Its goroutine sees stateWoken after the read returns and ends; c
	// is not released meanwhile (removeConn needs s.mu).
	victim.st.SetReadDeadline(aLongTimeAgo)
	return true
}

// StopListener stops accepting on l (a listener given to ServeTCP,
// ServeLoop, ServeStream or ServeMessages) without touching its
// connections, which are served until they end (Shutdown still drains
// them). Its Serve call returns ErrListenerStopped. It reports whether l
// was being served.
func (s *Server) StopListener(l any) bool {
	s.mu.Lock()
	key := l
	if k, ok := s.aliases[l]; ok {
		key = k
	}
	fn, ok := s.listeners[key]
	if !ok {
		if nl, isNet := l.(net.Listener); isNet {
			key = netListener{nl}
			fn, ok = s.listeners[key]
		}
	}
	if ok {
		s.stopped[key] = true
	}
	s.mu.Unlock()
	if ok {
		fn()
		s.h2.goaway(key, false) // its HTTP/2 connections drain
	}
	return ok
}

// alias makes StopListener(l) stop the Serve call tracked as key (nil:
// forget l).
func (s *Server) alias(l, key any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if key == nil {
		delete(s.aliases, l)
		return
	}
	if s.aliases == nil {
		s.aliases = make(map[any]any)
	}
	s.aliases[l] = key
}

func (s *Server) wasStopped(key any) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopped[key]
}

// freshCutoff is the sparedFresh cutoff at now: a connection waiting for
// its first request since a later time (Unix milliseconds) is spared.
func freshCutoff(now time.Time) int64 { return now.Add(-reclaimFreshAfter).UnixMilli() }

// sparedFresh reports whether the connection with state word st is one
// that has waited less than reclaimFreshAfter for its first request
// (freshCutoff): reclaimIdle does not take it for another, and Shutdown
// lets it send that request before closing it. The event loop's form is
// lconn.sparedFresh.
func sparedFresh(st, cutoff int64) bool {
	return st&stateMask == stateFresh && st>>stateBits > cutoff
}
