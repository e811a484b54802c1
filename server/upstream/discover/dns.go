package discover

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"net"

	"golang.org/x/net/dns/dnsmessage"
)

// A small stub resolver for the configured servers: Go's net.Resolver
// gives no TTLs, and re-resolving on the TTL is the point. It sends one
// question per query over UDP (TCP when the answer was truncated, RFC
// 7766) and reads the answer and additional sections.

// Errors of a query.
var (
	ErrServFail  = errors.New("discover: the DNS server failed the query")
	ErrNXDomain  = errors.New("discover: the name does not exist")
	ErrBadAnswer = errors.New("discover: malformed DNS answer")
)

// udpSize is the EDNS(0) payload size advertised (RFC 6891; 1232 is the
// DNS flag day 2020 value that avoids IP fragmentation).
const udpSize = 1232

// maxTCPMessage bounds an answer read over TCP (its length prefix is 16
// bits anyway).
const maxTCPMessage = 1 << 16

// record is one resource record of an answer, reduced to what discovery
// uses.
type record struct {
	typ  dnsmessage.Type
	name string
	ttl  uint32
	ip   net.IP // A, AAAA
	// SRV
	target                 string
	port, weight, priority uint16
}

// exchange asks server one question and returns the answer and
// additional records.
func exchange(ctx context.Context, server, name string, typ dnsmessage.Type) ([]record, error) {
	q, err := dnsmessage.NewName(fqdn(name))
	if err != nil {
		return nil, ErrBadAnswer
	}
	id := uint16(rand.Uint32())
	b := dnsmessage.NewBuilder(make([]byte, 0, 512), dnsmessage.Header{ID: id, RecursionDesired: true})
	b.EnableCompression()
	_ = b.StartQuestions()
	_ = b.Question(dnsmessage.Question{Name: q, Type: typ, Class: dnsmessage.ClassINET})
	_ = b.StartAdditionals()
	var rh dnsmessage.ResourceHeader
	_ = rh.SetEDNS0(udpSize, dnsmessage.RCodeSuccess, false)
	_ = b.OPTResource(rh, dnsmessage.OPTResource{})
	msg, err := b.Finish()
	if err != nil {
		return nil, ErrBadAnswer
	}
	ans, err := roundTrip(ctx, "udp", server, msg)
	if err != nil {
		return nil, err
	}
	recs, truncated, err := parseAnswer(ans, id)
	if truncated {
		if ans, err = roundTrip(ctx, "tcp", server, msg); err != nil {
			return nil, err
		}
		recs, _, err = parseAnswer(ans, id)
	}
	return recs, err
}

// parseAnswer reads an answer to the query id: its answer and additional
// records, or whether it was truncated (then the caller asks over TCP).
// The bytes come from the network: every malformation is ErrBadAnswer.
func parseAnswer(ans []byte, id uint16) (out []record, truncated bool, err error) {
	var p dnsmessage.Parser
	h, err := p.Start(ans)
	if err != nil || h.ID != id || !h.Response {
		return nil, false, ErrBadAnswer
	}
	if h.Truncated {
		return nil, true, nil
	}
	switch h.RCode {
	case dnsmessage.RCodeSuccess:
	case dnsmessage.RCodeNameError:
		return nil, false, ErrNXDomain
	default:
		return nil, false, ErrServFail
	}
	if err := p.SkipAllQuestions(); err != nil {
		return nil, false, ErrBadAnswer
	}
	for section := 0; section < 3; section++ {
	records:
		for {
			var rh dnsmessage.ResourceHeader
			switch section {
			case 0:
				rh, err = p.AnswerHeader()
			case 1:
				rh, err = p.AuthorityHeader()
			default:
				rh, err = p.AdditionalHeader()
			}
			if err == dnsmessage.ErrSectionDone {
				break records
			}
			if err != nil {
				return nil, false, ErrBadAnswer
			}
			if len(out) >= maxRecords {
				return nil, false, ErrBadAnswer
			}
			r := record{typ: rh.Type, name: rh.Name.String(), ttl: rh.TTL}
			switch {
			case section == 1:
				err = p.SkipAuthority()
				r.typ = 0
			case rh.Type == dnsmessage.TypeA:
				var a dnsmessage.AResource
				if a, err = p.AResource(); err == nil {
					r.ip = net.IP(a.A[:])
				}
			case rh.Type == dnsmessage.TypeAAAA:
				var a dnsmessage.AAAAResource
				if a, err = p.AAAAResource(); err == nil {
					r.ip = net.IP(a.AAAA[:])
				}
			case rh.Type == dnsmessage.TypeSRV:
				var s dnsmessage.SRVResource
				if s, err = p.SRVResource(); err == nil {
					r.target, r.port, r.weight, r.priority = s.Target.String(), s.Port, s.Weight, s.Priority
				}
			default:
				r.typ = 0
				if section == 0 {
					err = p.SkipAnswer()
				} else {
					err = p.SkipAdditional()
				}
			}
			if err != nil {
				return nil, false, ErrBadAnswer
			}
			if r.typ != 0 {
				out = append(out, r)
			}
		}
	}
	return out, false, nil
}

// maxRecords bounds the records taken from one answer (a 64 KiB TCP
// answer holds at most a few thousand; a pool takes MaxTargets).
const maxRecords = 4096

// roundTrip sends msg to server over network and returns the reply.
func roundTrip(ctx context.Context, network, server string, msg []byte) ([]byte, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, server)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	if network == "udp" {
		if _, err := c.Write(msg); err != nil {
			return nil, err
		}
		buf := make([]byte, udpSize)
		n, err := c.Read(buf)
		if err != nil {
			return nil, err
		}
		return buf[:n], nil
	}
	out := binary.BigEndian.AppendUint16(make([]byte, 0, 2+len(msg)), uint16(len(msg)))
	if _, err := c.Write(append(out, msg...)); err != nil {
		return nil, err
	}
	var l [2]byte
	if _, err := io.ReadFull(c, l[:]); err != nil {
		return nil, err
	}
	buf := make([]byte, min(int(binary.BigEndian.Uint16(l[:])), maxTCPMessage))
	if _, err := io.ReadFull(c, buf); err != nil {
		return nil, err
	}
	return buf, nil
}
