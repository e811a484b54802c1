package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"

	"github.com/simdedge/simdedge/internal/testcert"
	"github.com/simdedge/simdedge/xdp/xdptest"
)

// xdpHTTP3Config writes a configuration with one xdp listener serving
// HTTP/3 on its UDP port with cert, and respond and echo routes.
func xdpHTTP3Config(t *testing.T, file, iface, body string, cert *testcert.Pair) {
	t.Helper()
	cfg := fmt.Sprintf(`listeners:
  - transport: xdp
    http3: true
    tls:
      certificates: [{cert: %s, key: %s}]
    xdp: {interface: %s, address: %s, udp_port: %d, mode: generic, ring_size: 256}
limits:
  max_body_bytes: %d
routes:
  - match: {path_prefix: /echo}
    echo: {}
  - match: {path_prefix: /big}
    respond: {status: 200, body: "%s"}
  - respond: {status: 200, body: %q}
`, cert.CertFile, cert.KeyFile, iface, xdptest.Addr(xdptest.ServerIP), xdpUDPPort, 4*bigBody, strings.Repeat("b", bigBody), body)
	if err := os.WriteFile(file, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestXDPServeHTTP3: simdedge serve with an xdp listener with http3: true
// answers quic-go's HTTP/3 client over AF_XDP from its routes (1 MiB
// down from respond, 1 MiB up to echo), and SIGHUP reloads its certificate and routes.
func TestXDPServeHTTP3(t *testing.T) {
	v := xdptest.NewVeth(t)
	bin := buildSimdedge(t)
	ca := testcert.NewCA(t, "xdp h3 CA")
	var z time.Time
	a1 := ca.Leaf(t, "a1", []string{"a.example"}, z, z)
	a2 := ca.Leaf(t, "a2", []string{"a.example"}, z, z)
	file := filepath.Join(t.TempDir(), "h3.yaml")
	xdpHTTP3Config(t, file, v.ServerIf, "one", a1)
	p := startSimdedge(t, bin, v.ServerNS, file)

	var cpc net.PacketConn
	if err := xdptest.InNS(v.ClientNS, func() (err error) {
		cpc, err = net.ListenPacket("udp4", "0.0.0.0:0")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer cpc.Close()
	qt := &quic.Transport{Conn: cpc}
	defer qt.Close()
	addr := &net.UDPAddr{IP: net.IP(xdptest.ServerIP[:]), Port: xdpUDPPort}
	tc := &tls.Config{RootCAs: ca.Pool, ServerName: "a.example", NextProtos: []string{http3.NextProtoH3}}
	// Each exchange on a fresh connection, so a reloaded certificate shows.
	do := func(method, path string, body []byte) (int, []byte, string) {
		tr := &http3.Transport{TLSClientConfig: tc, Dial: func(ctx context.Context, _ string, tc *tls.Config, qc *quic.Config) (*quic.Conn, error) {
			return qt.DialEarly(ctx, addr, tc, qc)
		}}
		defer tr.Close()
		req, _ := http.NewRequest(method, "https://a.example"+path, bytes.NewReader(body))
		resp, err := (&http.Client{Timeout: 20 * time.Second, Transport: tr}).Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", method, path, err, p.stderr.String())
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("%s %s: body: %v", method, path, err)
		}
		return resp.StatusCode, b, resp.TLS.PeerCertificates[0].SerialNumber.String()
	}
	if code, b, serial := do("GET", "/", nil); code != 200 || string(b) != "one" || serial != a1.Leaf.SerialNumber.String() {
		t.Fatalf("respond: %d %q", code, b)
	}
	if code, b, _ := do("GET", "/big", nil); code != 200 || len(b) != bigBody {
		t.Fatalf("1 MiB download: %d, %d bytes", code, len(b))
	}
	up := bytes.Repeat([]byte("u"), bigBody)
	if code, b, _ := do("POST", "/echo", up); code != 200 || !bytes.Contains(b, []byte(`"version":"HTTP/3"`)) ||
		!bytes.Contains(b, []byte(fmt.Sprintf(`"body_len":%d`, bigBody))) {
		t.Fatalf("echo of 1 MiB: %d %.300q", code, b)
	}

	xdpHTTP3Config(t, file, v.ServerIf, "two", a2)
	p.cmd.Process.Signal(syscall.SIGHUP)
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, b, serial := do("GET", "/", nil)
		if code == 200 && string(b) == "two" && serial == a2.Leaf.SerialNumber.String() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after SIGHUP: %d %q, certificate %s\n%s", code, b, serial, p.stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := p.stop(t); err != nil {
		t.Fatalf("exit: %v\n%s", err, p.stderr.String())
	}
	if strings.Contains(p.stderr.String(), `"level":"ERROR"`) {
		t.Errorf("errors logged:\n%s", p.stderr.String())
	}
}
