package xdp

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/simdedge/simdedge/xdp/xdptest"
)

// TestDeviceFrames checks the userspace-stack side of the Listener: frames
// to the TCP port reach HandleStream, and Transmit puts frames on the wire
// (from several goroutines at once).
func TestDeviceFrames(t *testing.T) {
	v := xdptest.NewVeth(t)
	l := startListener(t, v, Native, echoHandler)
	if l.MTU() != 1500 || len(l.MAC()) != 6 {
		t.Fatalf("MTU %d MAC %v", l.MTU(), l.MAC())
	}
	syns := make(chan []byte, 16)
	l.HandleStream(func(f []byte) {
		select {
		case syns <- append([]byte(nil), f...):
		default:
		}
	})
	srvAddr := fmt.Sprintf("%d.%d.%d.%d", v.ServerIP[0], v.ServerIP[1], v.ServerIP[2], v.ServerIP[3])
	// Nothing answers the SYN (the kernel never sees it); the frame is all
	// the test wants.
	go xdptest.InNS(v.ClientNS, func() error {
		c, err := net.DialTimeout("tcp4", fmt.Sprintf("%s:%d", srvAddr, testTCPPort), 2*time.Second)
		if err == nil {
			c.Close()
		}
		return nil
	})
	var syn []byte
	select {
	case syn = <-syns:
	case <-time.After(5 * time.Second):
		t.Fatal("no frame reached the stream handler")
	}
	k, _, _ := classify(syn, v.ServerIP, false, testTCPPort, 0)
	if k != kindStream || syn[ethLen+ipv4Len+13]&0x02 == 0 {
		t.Fatalf("stream frame is not a SYN to the service port: % x", syn)
	}

	// Transmit UDP datagrams to a kernel socket of the client, built with
	// the reply builder from the SYN's addresses.
	var pc net.PacketConn
	if err := xdptest.InNS(v.ClientNS, func() (err error) { pc, err = net.ListenPacket("udp4", ":0"); return err }); err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	cport := uint16(pc.LocalAddr().(*net.UDPAddr).Port)
	const senders, each = 4, 25
	var wg sync.WaitGroup
	errs := make(chan error, senders)
	for s := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				req := testFrame{src: [4]byte(syn[ethLen+ipSrc:]), dst: v.ServerIP, sport: cport, dport: testUDPPort,
					srcMAC: [6]byte(syn[ethSrc:]), dstMAC: [6]byte(l.MAC())}.build()
				out := make([]byte, 256)
				payload := fmt.Sprintf("s%d-%d", s, i)
				copy(out[udpHeadersAt:], payload)
				n := writeReplyHeaders(out, req, len(payload))
				if err := l.Transmit(out[:n]); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got := map[string]bool{}
	buf := make([]byte, 64)
	pc.SetReadDeadline(time.Now().Add(5 * time.Second))
	for len(got) < senders*each {
		n, _, err := pc.ReadFrom(buf)
		if err != nil {
			break
		}
		got[string(buf[:n])] = true
	}
	// veth does not lose frames here, but the socket buffer could; the
	// test wants nearly all.
	if len(got) < senders*each*9/10 {
		t.Fatalf("client received %d of %d transmitted datagrams", len(got), senders*each)
	}
	if err := l.Transmit(make([]byte, 1515)); err != ErrFrameTooLarge {
		t.Fatalf("Transmit of 1515 bytes: %v, want ErrFrameTooLarge", err)
	}
}

// TestTransmitDuringClose: a userspace stack may flush a segment while the
// listener closes; Transmit then fails with ErrClosed rather than writing
// into UMEM that Close has unmapped (which would crash the process).
func TestTransmitDuringClose(t *testing.T) {
	v := xdptest.NewVeth(t)
	l := startListener(t, v, Native, echoHandler)
	frame := make([]byte, 128) // contents do not matter: it only has to leave
	copy(frame, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	const senders = 4
	deadline := time.Now().Add(5 * time.Second)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	sent := make([]int, senders)
	closedErr := make([]error, senders)
	for s := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				select {
				case <-stop:
					return
				default:
				}
				err := l.Transmit(frame)
				switch {
				case err == nil:
					sent[s]++
				case errors.Is(err, ErrClosed):
					closedErr[s] = err
					return
				case errors.Is(err, ErrTXFull):
					// the kernel has not sent the ring yet; try again
				default:
					t.Errorf("Transmit: %v", err)
					return
				}
			}
		}()
	}
	time.Sleep(20 * time.Millisecond)
	if err := l.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	// Every sender sees ErrClosed soon after Close returned.
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		close(stop)
		<-done
		t.Fatal("Transmit kept succeeding after Close")
	}
	total := 0
	for s := range senders {
		total += sent[s]
		if closedErr[s] == nil {
			t.Errorf("sender %d never saw ErrClosed", s)
		}
	}
	if total == 0 {
		t.Error("nothing was transmitted before Close")
	}
	if err := l.Transmit(frame); !errors.Is(err, ErrClosed) {
		t.Errorf("Transmit after Close: %v, want ErrClosed", err)
	}
}
