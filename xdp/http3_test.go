package xdp

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"

	"github.com/simdedge/simdedge/internal/testcert"
	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/edgetls"
	"github.com/simdedge/simdedge/xdp/xdptest"
)

// h3Timeout bounds every HTTP/3 exchange of these tests.
const h3Timeout = 20 * time.Second

// h3BigSize is the 1 MiB body sent each way.
const h3BigSize = 1 << 20

// h3Handler answers /respond with a fixed body, /big with 1 MiB, and
// echoes the body of anything else.
var h3Handler = server.HandlerFunc(func(w *server.ResponseWriter, r *server.Request) {
	switch string(r.Target()) {
	case "/respond":
		fmt.Fprintf(w, "hello h3=%v", r.HTTP3())
	case "/big":
		w.Write(bytes.Repeat([]byte("0123456789abcdef"), h3BigSize/16))
	default:
		io.Copy(w, r.Body())
	}
})

// h3Env is a server on the Listener's PacketConn in the server
// namespace, and what its clients need.
type h3Env struct {
	v    *xdptest.Veth
	l    *Listener
	pc   *packetConn
	srv  *server.Server
	ca   *testcert.CA
	addr *net.UDPAddr // the server's, as the client namespace reaches it
	base string       // https://ADDR:PORT
}

// startHTTP3 serves h3Handler over HTTP/3 on the Listener's PacketConn in
// the server namespace, and returns quic-go's client in the client
// namespace and the base URL.
func startHTTP3(t *testing.T, v *xdptest.Veth, mode Mode, queues []int) (*Listener, *http.Client, string) {
	t.Helper()
	e := serveHTTP3(t, v, mode, queues, server.Options{Handler: h3Handler}, server.HTTP3Options{})
	return e.l, e.client(t), e.base
}

// serveHTTP3 serves so.Handler over HTTP/3 with o on the Listener's
// PacketConn in the server namespace, until cleanup.
func serveHTTP3(t *testing.T, v *xdptest.Veth, mode Mode, queues []int, so server.Options, o server.HTTP3Options) *h3Env {
	t.Helper()
	var l *Listener
	err := xdptest.InNS(v.ServerNS, func() (err error) {
		l, err = Listen(Config{Interface: v.ServerIf, Address: netip.AddrFrom4(v.ServerIP),
			UDPPort: testUDPPort, Mode: mode, RingSize: 256, Queues: queues})
		return err
	})
	if err != nil {
		testenv.Need(t, testenv.RequireXDP, false, "cannot start AF_XDP: "+err.Error())
	}
	pc, err := l.PacketConn()
	if err != nil {
		l.Close()
		t.Fatal(err)
	}
	if _, err := l.PacketConn(); !errors.Is(err, ErrPacketConn) {
		t.Errorf("second PacketConn: %v, want ErrPacketConn", err)
	}
	ca := testcert.NewCA(t, "xdp test CA")
	var z time.Time
	leaf := ca.Leaf(t, "a", []string{"a.example"}, z, z)
	st, err := edgetls.New(edgetls.Options{Certificates: []edgetls.CertFiles{{Cert: leaf.CertFile, Key: leaf.KeyFile}}})
	if err != nil {
		t.Fatal(err)
	}
	srv := server.New(so)
	served := make(chan error, 1)
	go func() { served <- srv.ServeHTTP3(pc, st.QUICConfig(), o) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), h3Timeout)
		defer cancel()
		srv.Shutdown(ctx)
		select {
		case err := <-served:
			if !errors.Is(err, server.ErrServerClosed) {
				t.Errorf("ServeHTTP3: %v", err)
			}
		case <-time.After(h3Timeout):
			t.Error("ServeHTTP3 still running after Shutdown")
		}
		if err := pc.Close(); err != nil {
			t.Errorf("PacketConn Close: %v", err)
		}
		if err := l.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return &h3Env{v: v, l: l, pc: pc.(*packetConn), srv: srv, ca: ca,
		addr: &net.UDPAddr{IP: net.IP(v.ServerIP[:]), Port: testUDPPort},
		base: fmt.Sprintf("https://%s:%d", xdptest.Addr(v.ServerIP), testUDPPort)}
}

// clientSocket is a UDP socket of the client namespace, closed at
// cleanup.
func (e *h3Env) clientSocket(t *testing.T) *net.UDPConn {
	t.Helper()
	var c *net.UDPConn
	if err := xdptest.InNS(e.v.ClientNS, func() (err error) {
		c, err = net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4zero})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// transport is a quic-go transport on pc (a client namespace socket),
// closed at cleanup.
func (e *h3Env) transport(t *testing.T, pc net.PacketConn) *quic.Transport {
	t.Helper()
	qt := &quic.Transport{Conn: pc}
	t.Cleanup(func() { qt.Close() })
	return qt
}

// client is quic-go's HTTP/3 client in the client namespace.
func (e *h3Env) client(t *testing.T) *http.Client {
	t.Helper()
	qt := e.transport(t, e.clientSocket(t))
	tr := &http3.Transport{
		TLSClientConfig: &tls.Config{RootCAs: e.ca.Pool, ServerName: "a.example"},
		QUICConfig:      &quic.Config{MaxIdleTimeout: h3Timeout},
		Dial: func(ctx context.Context, addr string, tc *tls.Config, qc *quic.Config) (*quic.Conn, error) {
			ua, err := net.ResolveUDPAddr("udp4", addr)
			if err != nil {
				return nil, err
			}
			return qt.DialEarly(ctx, ua, tc, qc)
		},
	}
	t.Cleanup(func() { tr.Close() })
	return &http.Client{Transport: tr, Timeout: h3Timeout}
}

func h3Get(c *http.Client, method, url string, body io.Reader) (*http.Response, []byte, error) {
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		return nil, nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}

// TestHTTP3OverXDP: quic-go's HTTP/3 client against the server on the
// AF_XDP PacketConn: a respond route, 1 MiB down, 1 MiB echoed up and
// back, then 100 concurrent streams on the one connection; in both modes,
// and with two RX queues (one PacketConn over both sockets).
func TestHTTP3OverXDP(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mode   Mode
		queues int
	}{{"native", Native, 1}, {"generic", Generic, 1}, {"native-2-queues", Native, 2}} {
		t.Run(tc.name, func(t *testing.T) {
			testenv.CheckGoroutines(t)
			v := xdptest.NewVethQueues(t, tc.queues)
			var queues []int
			for q := range tc.queues {
				queues = append(queues, q)
			}
			l, c, base := startHTTP3(t, v, tc.mode, queues)

			resp, b, err := h3Get(c, "GET", base+"/respond", nil)
			if err != nil || resp.StatusCode != 200 || resp.Proto != "HTTP/3.0" || string(b) != "hello h3=true" {
				t.Fatalf("/respond: %v %v %q", err, resp, b)
			}
			resp, b, err = h3Get(c, "GET", base+"/big", nil)
			if err != nil || resp.StatusCode != 200 || len(b) != h3BigSize {
				t.Fatalf("/big: %v, %d bytes", err, len(b))
			}
			up := bytes.Repeat([]byte("fedcba9876543210"), h3BigSize/16)
			resp, b, err = h3Get(c, "POST", base+"/echo", bytes.NewReader(up))
			if err != nil || resp.StatusCode != 200 || !bytes.Equal(b, up) {
				t.Fatalf("/echo of 1 MiB: %v, %d bytes back", err, len(b))
			}

			const n = 100
			var wg sync.WaitGroup
			errs := make(chan error, n)
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					body := strings.Repeat(fmt.Sprint(i), 1000)
					resp, b, err := h3Get(c, "POST", base+"/echo", strings.NewReader(body))
					if err != nil || resp.StatusCode != 200 || string(b) != body {
						errs <- fmt.Errorf("stream %d: %v, %d bytes", i, err, len(b))
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			// It all went through the AF_XDP sockets: 1 MiB each way is
			// over 700 full datagrams.
			st, err := l.Stats()
			if err != nil || st.Datagrams < 700 || st.Sent < 700 {
				t.Errorf("stats %+v, %v: want 700 datagrams each way over AF_XDP", st, err)
			}
			t.Logf("received %d datagrams, sent %d frames", st.Datagrams, st.Sent)
		})
	}
}
