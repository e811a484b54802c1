package rdma

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"testing"
)

func encodeMsg(h header, payload []byte) []byte {
	h.length = uint32(len(payload))
	b := make([]byte, headerSize+len(payload))
	h.put(b)
	copy(b[headerSize:], payload)
	return b
}

func TestHeaderRoundTrip(t *testing.T) {
	advert := make([]byte, descriptorSize+5)
	(&descriptor{addr: 0x1122334455667788, length: 64 << 20, key: 42}).put(advert)
	copy(advert[descriptorSize:], "GET /")
	errPayload := binary.LittleEndian.AppendUint32(nil, errCodeTooLarge)
	for _, tc := range []struct {
		h       header
		payload []byte
	}{
		{header{kind: kindRequest, credits: 3, id: 1}, []byte("GET / HTTP/1.1\r\nHost: a\r\n\r\n")},
		{header{kind: kindResponse, id: 1<<64 - 1}, []byte("HTTP/1.1 200 OK\r\n\r\n")},
		{header{kind: kindContinuation, id: 7, credits: maxCredits}, []byte("x")},
		{header{kind: kindCredit, credits: 16}, nil},
		{header{kind: kindAdvert, id: 9, flags: flagMore}, advert},
		{header{kind: kindAdvert, id: 9}, advert},
		{header{kind: kindAdvert, id: 9, flags: flagEnvelope}, advert},
		{header{kind: kindRequest, id: 2, flags: flagEnvelope}, []byte("\x10\x00\x00\x00SEDG")},
		{header{kind: kindDone, id: 9}, nil},
		{header{kind: kindError, id: 9}, errPayload},
		{header{kind: kindRequest}, nil},
	} {
		m := encodeMsg(tc.h, tc.payload)
		got, err := parseHeader(m)
		if err != nil {
			t.Fatalf("%v: %v", tc.h.kind, err)
		}
		tc.h.length = uint32(len(tc.payload))
		if got != tc.h {
			t.Errorf("%v: got %+v, want %+v", tc.h.kind, got, tc.h)
		}
		if !bytes.Equal(m[headerSize:], tc.payload) {
			t.Errorf("%v: payload changed", tc.h.kind)
		}
	}
	m := encodeMsg(header{kind: kindAdvert, id: 3}, advert)
	d, prefix := parseDescriptor(m)
	if d != (descriptor{addr: 0x1122334455667788, length: 64 << 20, key: 42}) || string(prefix) != "GET /" {
		t.Errorf("descriptor = %+v, prefix %q", d, prefix)
	}
	if err := errorOf(encodeMsg(header{kind: kindError}, errPayload)); err != ErrTooLarge {
		t.Errorf("errorOf = %v, want ErrTooLarge", err)
	}
}

func TestHeaderRejects(t *testing.T) {
	good := encodeMsg(header{kind: kindRequest, id: 5}, []byte("GET / HTTP/1.1\r\n\r\n"))
	mod := func(f func(b []byte) []byte) []byte {
		return f(append([]byte(nil), good...))
	}
	advertWith := func(length uint64, payload int) []byte {
		p := make([]byte, payload)
		if payload >= descriptorSize {
			(&descriptor{addr: 1, length: length, key: 2}).put(p)
		}
		return encodeMsg(header{kind: kindAdvert}, p)
	}
	for _, tc := range []struct {
		name string
		msg  []byte
		want error
	}{
		{"empty", nil, ErrShortHeader},
		{"short", good[:headerSize-1], ErrShortHeader},
		{"version 0", mod(func(b []byte) []byte { b[offVersion] = 0; return b }), ErrVersion},
		{"version 2", mod(func(b []byte) []byte { b[offVersion] = 2; return b }), ErrVersion},
		{"kind 0", mod(func(b []byte) []byte { b[offKind] = 0; return b }), ErrKind},
		{"kind 8", mod(func(b []byte) []byte { b[offKind] = byte(kindLast + 1); return b }), ErrKind},
		{"kind 255", mod(func(b []byte) []byte { b[offKind] = 255; return b }), ErrKind},
		{"more on request", mod(func(b []byte) []byte { b[offFlags] = byte(flagMore); return b }), ErrFlags},
		{"unknown flag on advert", func() []byte {
			b := advertWith(10, descriptorSize)
			b[offFlags] = 4
			return b
		}(), ErrFlags},
		{"unknown flag on request", mod(func(b []byte) []byte { b[offFlags] = 4; return b }), ErrFlags},
		{"high flag on request", mod(func(b []byte) []byte { b[offFlags+1] = 0x80; return b }), ErrFlags},
		{"envelope on response", encodeMsg(header{kind: kindResponse, flags: flagEnvelope}, []byte("x")), ErrFlags},
		{"envelope on credit", encodeMsg(header{kind: kindCredit, flags: flagEnvelope}, nil), ErrFlags},
		{"envelope on done", encodeMsg(header{kind: kindDone, flags: flagEnvelope}, nil), ErrFlags},
		{"reserved", mod(func(b []byte) []byte { b[offReserved+3] = 1; return b }), ErrReserved},
		{"length too long", mod(func(b []byte) []byte { b[offLength]++; return b }), ErrLength},
		{"length too short", mod(func(b []byte) []byte { b[offLength]--; return b }), ErrLength},
		{"length huge", mod(func(b []byte) []byte { binary.LittleEndian.PutUint32(b[offLength:], 1<<32-1); return b }), ErrLength},
		{"trailing bytes", append(append([]byte(nil), good...), 0), ErrLength},
		{"credit with payload", encodeMsg(header{kind: kindCredit}, []byte{1}), ErrLength},
		{"done with payload", encodeMsg(header{kind: kindDone}, []byte{1}), ErrLength},
		{"error without code", encodeMsg(header{kind: kindError}, nil), ErrLength},
		{"error code 0", encodeMsg(header{kind: kindError}, []byte{0, 0, 0, 0}), ErrErrorCode},
		{"error code unknown", encodeMsg(header{kind: kindError}, binary.LittleEndian.AppendUint32(nil, errCodeLast+1)), ErrErrorCode},
		{"advert without descriptor", advertWith(10, descriptorSize-1), ErrRendezvous},
		{"advert of zero bytes", advertWith(0, descriptorSize), ErrRendezvous},
	} {
		_, err := parseHeader(tc.msg)
		if !errors.Is(err, tc.want) || !errors.Is(err, ErrProtocol) {
			t.Errorf("%s: err = %v, want %v wrapped in ErrProtocol", tc.name, err, tc.want)
		}
	}
}

func TestParseHeaderAllocs(t *testing.T) {
	good := encodeMsg(header{kind: kindRequest, id: 5}, []byte("GET / HTTP/1.1\r\n\r\n"))
	bad := good[:3]
	if n := testing.AllocsPerRun(100, func() {
		parseHeader(good)
		parseHeader(bad)
	}); n != 0 {
		t.Errorf("parseHeader allocates %v times", n)
	}
}

// TestWindowSimulation runs two sides of a connection through random
// schedules: sending data when allowed, holding and releasing buffers,
// with messages in flight. It checks that no message ever finds the
// receiver without a posted buffer (the invariant credit control exists
// for), and that every data message is delivered (no deadlock).
func TestWindowSimulation(t *testing.T) {
	for seed := range uint64(300) {
		r := rand.New(rand.NewPCG(seed, 7))
		sizes := [2]int{minCredits + r.IntN(12), minCredits + r.IntN(12)}
		simulate(t, r, sizes, 40+r.IntN(200))
		if t.Failed() {
			t.Fatalf("seed %d, windows %v", seed, sizes)
		}
	}
}

type simMsg struct {
	update bool
	grant  uint32
}

type simSide struct {
	w      window
	posted int      // receive buffers posted
	held   int      // data messages received and not yet released
	inbox  []simMsg // in flight towards this side, in order
	toSend int      // data messages still to send
	got    int      // data messages received
}

func simulate(t *testing.T, r *rand.Rand, sizes [2]int, data int) {
	var s [2]simSide
	s[0].w, s[1].w = newClientWindow(sizes[0]), newServerWindow(sizes[1])
	s[0].posted, s[1].posted = sizes[0], sizes[1]
	s[0].toSend, s[1].toSend = data, data
	send := func(from int, update bool) {
		g := s[from].w.spend()
		s[1-from].inbox = append(s[1-from].inbox, simMsg{update: update, grant: g})
	}
	send(0, true) // the hello
	for step := 0; step < 200000; step++ {
		i := r.IntN(2)
		me, peer := &s[i], &s[1-i]
		switch r.IntN(4) {
		case 0: // send data
			if me.toSend > 0 && me.w.canSend(false) {
				me.toSend--
				send(i, false)
			}
		case 1: // deliver one message in flight to me
			if len(me.inbox) == 0 {
				continue
			}
			m := me.inbox[0]
			me.inbox = me.inbox[1:]
			if me.posted == 0 {
				t.Errorf("side %d: message arrived with no posted buffer", i)
				return
			}
			me.posted--
			if err := me.w.receive(m.grant); err != nil {
				t.Errorf("side %d: %v", i, err)
				return
			}
			if m.update {
				me.posted++ // handled at once and re-posted
				me.w.reposted(true)
			} else {
				me.held++
				me.got++
			}
		case 2: // release a held buffer
			if me.held == 0 {
				continue
			}
			me.held--
			me.posted++
			me.w.reposted(false)
		case 3:
			_ = peer
		}
		if me.w.needUpdate() && me.w.canSend(true) {
			send(i, true)
		}
		if s[0].got == data && s[1].got == data && s[0].toSend == 0 && s[1].toSend == 0 {
			return
		}
	}
	t.Errorf("stuck: sent/received %d/%d and %d/%d, credits %d and %d, pending %d and %d, held %d and %d, in flight %d and %d",
		data-s[0].toSend, s[1].got, data-s[1].toSend, s[0].got, s[0].w.credits, s[1].w.credits,
		s[0].w.pending, s[1].w.pending, s[0].held, s[1].held, len(s[1].inbox), len(s[0].inbox))
}

func TestWindowRejectsOverrun(t *testing.T) {
	w := newServerWindow(4)
	if err := w.receive(4); err != nil { // the hello
		t.Fatal(err)
	}
	if err := w.receive(0); !errors.Is(err, ErrCredits) {
		t.Errorf("a message beyond the granted buffers: err = %v, want ErrCredits", err)
	}
	c := newClientWindow(4)
	if err := c.receive(maxCredits + 1); !errors.Is(err, ErrCredits) {
		t.Errorf("an absurd grant: err = %v, want ErrCredits", err)
	}
}

// The client's domain is local: a loopback server picks the loopback
// domain, any other leaves the choice to the provider (or DialOptions.Local),
// never the server's address (which fails with ErrNoDevice off loopback).
func TestLocalNode(t *testing.T) {
	for _, c := range []struct{ host, local, want string }{
		{"127.0.0.1", "", "127.0.0.1"},
		{"::1", "", "::1"},
		{"localhost", "", "localhost"},
		{"10.1.2.3", "", ""},
		{"backend.example", "", ""},
		{"10.1.2.3", "10.9.9.9", "10.9.9.9"},
	} {
		o := DialOptions{Local: c.local}
		if got := localNode(c.host, &o); got != c.want {
			t.Errorf("localNode(%q, Local %q) = %q, want %q", c.host, c.local, got, c.want)
		}
	}
}
