package xdp

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/xdp/xdptest"
)

// TestQUICPacketConn: the PacketConn under a plain UDP client, the way
// quic-go uses it: datagrams read with their sender, answers written back
// to it, read deadlines (also changed while ReadFrom blocks), the errors
// of bad destinations, and Close.
func TestQUICPacketConn(t *testing.T) {
	testenv.CheckGoroutines(t)
	v := xdptest.NewVeth(t)
	var l *Listener
	err := xdptest.InNS(v.ServerNS, func() (err error) {
		l, err = Listen(Config{Interface: v.ServerIf, Address: netip.AddrFrom4(v.ServerIP),
			UDPPort: testUDPPort, Mode: Generic, RingSize: 256})
		return err
	})
	if err != nil {
		testenv.Need(t, testenv.RequireXDP, false, "cannot start AF_XDP: "+err.Error())
	}
	t.Cleanup(func() { l.Close() })
	pc, err := l.PacketConn()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := pc.LocalAddr().String(), fmt.Sprintf("%s:%d", xdptest.Addr(v.ServerIP), testUDPPort); got != want {
		t.Errorf("LocalAddr %s, want %s", got, want)
	}
	var cc *net.UDPConn
	if err := xdptest.InNS(v.ClientNS, func() (err error) {
		cc, err = net.DialUDP("udp4", nil, &net.UDPAddr{IP: net.IP(v.ServerIP[:]), Port: testUDPPort})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer cc.Close()

	// A deadline in the past fails at once, as a timeout.
	pc.SetReadDeadline(time.Now().Add(-time.Second))
	if _, _, err := pc.ReadFrom(make([]byte, 10)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("ReadFrom past its deadline: %v", err)
	}
	pc.SetReadDeadline(time.Time{})

	buf := make([]byte, 2048)
	for i := range 50 {
		msg := bytes.Repeat([]byte{byte(i)}, 1+i*20)
		cc.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := cc.Write(msg); err != nil {
			t.Fatal(err)
		}
		pc.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, from, err := pc.ReadFrom(buf)
		if err != nil || !bytes.Equal(buf[:n], msg) {
			t.Fatalf("datagram %d: %v, %d bytes", i, err, n)
		}
		if from.String() != cc.LocalAddr().String() {
			t.Fatalf("from %s, want %s", from, cc.LocalAddr())
		}
		if _, err := pc.WriteTo(append([]byte("re:"), msg...), from); err != nil {
			t.Fatalf("WriteTo: %v", err)
		}
		n, err = cc.Read(buf)
		if err != nil || !bytes.Equal(buf[:n], append([]byte("re:"), msg...)) {
			t.Fatalf("answer %d: %v, %d bytes", i, err, n)
		}
	}
	// A short buffer truncates, as a UDP socket does.
	cc.Write([]byte("0123456789"))
	if n, _, err := pc.ReadFrom(buf[:4]); err != nil || string(buf[:n]) != "0123" {
		t.Fatalf("short read: %v %q", err, buf[:n])
	}

	from := cc.LocalAddr().(*net.UDPAddr)
	// An address nothing came from has no known MAC: the datagram is
	// lost and counted, as a UDP socket loses one whose neighbour does not
	// resolve, and no error (quic-go ends a connection on any).
	before, _ := l.Stats()
	for _, to := range []*net.UDPAddr{{IP: net.IP{198, 18, 0, 99}, Port: 4000}, {IP: from.IP, Port: from.Port + 1}} {
		if n, err := pc.WriteTo(make([]byte, 10), to); n != 10 || err != nil {
			t.Errorf("WriteTo %s, never heard from: %d, %v; want 10, nil", to, n, err)
		}
	}
	if after, _ := l.Stats(); after.NoRoute-before.NoRoute != 2 || after.Sent != before.Sent {
		t.Errorf("no-route writes: NoRoute +%d, Sent +%d; want +2, +0", after.NoRoute-before.NoRoute, after.Sent-before.Sent)
	}
	for _, c := range []struct {
		addr net.Addr
		n    int
		want error
	}{
		{&net.UDPAddr{IP: net.ParseIP("2001:db8::1"), Port: 4000}, 10, ErrNotUDP},
		{&net.TCPAddr{IP: from.IP, Port: from.Port}, 10, ErrNotUDP},
		{from, 9000, ErrFrameTooLarge},
	} {
		if _, err := pc.WriteTo(make([]byte, c.n), c.addr); !errors.Is(err, c.want) {
			t.Errorf("WriteTo %s (%d bytes): %v, want %v", c.addr, c.n, err, c.want)
		}
	}

	// A blocked ReadFrom sees a new deadline, and then Close.
	pc.SetReadDeadline(time.Time{})
	got := make(chan error, 1)
	go func() { _, _, err := pc.ReadFrom(buf); got <- err }()
	time.Sleep(20 * time.Millisecond)
	pc.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
	select {
	case err := <-got:
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Fatalf("ReadFrom after a new deadline: %v, want a timeout", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ReadFrom blocked past its new deadline")
	}
	pc.SetReadDeadline(time.Time{})
	go func() { _, _, err := pc.ReadFrom(buf); got <- err }()
	time.Sleep(20 * time.Millisecond)
	pc.Close()
	select {
	case err := <-got:
		if !errors.Is(err, net.ErrClosed) {
			t.Fatalf("ReadFrom after Close: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ReadFrom blocked after Close")
	}
	if _, err := pc.WriteTo([]byte("x"), from); !errors.Is(err, net.ErrClosed) {
		t.Errorf("WriteTo after Close: %v", err)
	}
	// Datagrams arriving now are dropped, and the frames return: the
	// Listener closes without waiting on them.
	cc.Write([]byte("late"))
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}
