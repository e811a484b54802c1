// Package testdns is a DNS server on loopback for tests of service
// discovery (server/upstream/discover, server/config): A, AAAA and SRV
// records that a test changes while it runs, answered over UDP and TCP on
// one port, built with golang.org/x/net/dns/dnsmessage (a dependency the
// module has anyway; interop/ tests against github.com/miekg/dns too).
package testdns

import (
	"encoding/binary"
	"io"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/net/dns/dnsmessage"
)

// SRV is one SRV record.
type SRV struct {
	Priority, Weight, Port uint16
	Target                 string
}

// Zone is the records served. Names are written without the final dot.
type Zone struct {
	mu  sync.Mutex
	a   map[string][]netip.Addr
	srv map[string][]SRV
	// ttl is given to every record (SetTTL).
	ttl atomic.Uint32
	// Truncate answers every UDP query with the TC bit and no records,
	// so a client must ask again over TCP.
	Truncate atomic.Bool
	// Glue adds the addresses of SRV targets to the additional section.
	Glue atomic.Bool
	// Queries counts the questions, by type.
	Queries sync.Map // dnsmessage.Type -> *atomic.Int64
}

// NewZone returns an empty zone with a TTL of ttl seconds.
func NewZone(ttl uint32) *Zone {
	z := &Zone{a: map[string][]netip.Addr{}, srv: map[string][]SRV{}}
	z.ttl.Store(ttl)
	return z
}

// SetTTL changes the TTL of the records served from now on.
func (z *Zone) SetTTL(ttl uint32) { z.ttl.Store(ttl) }

// SetA sets name's addresses (A and AAAA by family); none removes it.
func (z *Zone) SetA(name string, addrs ...string) {
	z.mu.Lock()
	defer z.mu.Unlock()
	var list []netip.Addr
	for _, a := range addrs {
		list = append(list, netip.MustParseAddr(a))
	}
	z.a[key(name)] = list
}

// SetSRV sets name's SRV records.
func (z *Zone) SetSRV(name string, recs ...SRV) {
	z.mu.Lock()
	defer z.mu.Unlock()
	z.srv[key(name)] = recs
}

// Count is the number of questions of type typ answered so far.
func (z *Zone) Count(typ dnsmessage.Type) int64 {
	if c, ok := z.Queries.Load(typ); ok {
		return c.(*atomic.Int64).Load()
	}
	return 0
}

func key(name string) string { return strings.ToLower(strings.TrimSuffix(name, ".")) }

// Serve serves z on a loopback port, UDP and TCP, until cleanup, and
// returns its address.
func Serve(tb testing.TB, z *Zone) string {
	tb.Helper()
	// One port for both: a UDP port the kernel picked may be taken for
	// TCP, so try a few.
	var pc net.PacketConn
	var ln net.Listener
	var err error
	for range bindTries {
		if pc, err = net.ListenPacket("udp", "127.0.0.1:0"); err != nil {
			tb.Fatal(err)
		}
		if ln, err = net.Listen("tcp", pc.LocalAddr().String()); err == nil {
			break
		}
		pc.Close()
	}
	if err != nil {
		tb.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if out := z.answer(buf[:n], true); out != nil {
				pc.WriteTo(out, from)
			}
		}
	}()
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				var l [2]byte
				if _, err := io.ReadFull(c, l[:]); err != nil {
					return
				}
				q := make([]byte, binary.BigEndian.Uint16(l[:]))
				if _, err := io.ReadFull(c, q); err != nil {
					return
				}
				if out := z.answer(q, false); out != nil {
					c.Write(binary.BigEndian.AppendUint16(nil, uint16(len(out))))
					c.Write(out)
				}
			}()
		}
	}()
	tb.Cleanup(func() {
		pc.Close()
		ln.Close()
		wg.Wait()
	})
	return pc.LocalAddr().String()
}

// bindTries bounds the search for a port free for UDP and TCP.
const bindTries = 20

// answer builds the reply to query q (nil for a malformed one).
func (z *Zone) answer(q []byte, udp bool) []byte {
	var p dnsmessage.Parser
	h, err := p.Start(q)
	if err != nil {
		return nil
	}
	qs, err := p.AllQuestions()
	if err != nil || len(qs) != 1 {
		return nil
	}
	question := qs[0]
	c, _ := z.Queries.LoadOrStore(question.Type, new(atomic.Int64))
	c.(*atomic.Int64).Add(1)
	rh := dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RecursionDesired: h.RecursionDesired}
	name := key(question.Name.String())
	z.mu.Lock()
	defer z.mu.Unlock()
	addrs, hasA := z.a[name]
	srvs, hasSRV := z.srv[name]
	if !hasA && !hasSRV {
		rh.RCode = dnsmessage.RCodeNameError
	}
	if udp && z.Truncate.Load() {
		rh.Truncated = true
	}
	b := dnsmessage.NewBuilder(nil, rh)
	b.StartQuestions()
	b.Question(question)
	b.StartAnswers()
	hdr := func(n string) dnsmessage.ResourceHeader {
		return dnsmessage.ResourceHeader{Name: dnsmessage.MustNewName(n + "."), Class: dnsmessage.ClassINET, TTL: z.ttl.Load()}
	}
	addAddr := func(n string, a netip.Addr, typ dnsmessage.Type) {
		switch {
		case a.Is4() && typ == dnsmessage.TypeA:
			b.AResource(hdr(n), dnsmessage.AResource{A: a.As4()})
		case a.Is6() && typ == dnsmessage.TypeAAAA:
			b.AAAAResource(hdr(n), dnsmessage.AAAAResource{AAAA: a.As16()})
		}
	}
	if !rh.Truncated {
		switch question.Type {
		case dnsmessage.TypeA, dnsmessage.TypeAAAA:
			for _, a := range addrs {
				addAddr(name, a, question.Type)
			}
		case dnsmessage.TypeSRV:
			for _, s := range srvs {
				b.SRVResource(hdr(name), dnsmessage.SRVResource{Priority: s.Priority, Weight: s.Weight, Port: s.Port,
					Target: dnsmessage.MustNewName(key(s.Target) + ".")})
			}
			if z.Glue.Load() {
				b.StartAdditionals()
				for _, s := range srvs {
					for _, a := range z.a[key(s.Target)] {
						addAddr(key(s.Target), a, dnsmessage.TypeA)
					}
				}
			}
		}
	}
	out, err := b.Finish()
	if err != nil {
		return nil
	}
	return out
}
