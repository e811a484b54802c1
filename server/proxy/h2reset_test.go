package proxy

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/simdedge/simdedge/internal/testnet"
)

// resetOrigin is an HTTP/2 (h2c) origin written on x/net/http2's Framer,
// since Go's server cannot reset a stream with a chosen code: it resets
// every request's stream with CANCEL, as a gRPC server does when a call's
// deadline passes. On /mid it first sends a 200 head and some DATA.
func resetOrigin(t *testing.T) string {
	t.Helper()
	l := testnet.Listen(t)
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go serveResetOrigin(c)
		}
	}()
	return l.Addr().String()
}

func serveResetOrigin(c net.Conn) {
	defer c.Close()
	c.SetDeadline(time.Now().Add(testTimeout))
	preface := make([]byte, len(http2.ClientPreface))
	if _, err := io.ReadFull(c, preface); err != nil {
		return
	}
	fr := http2.NewFramer(c, c)
	fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	fr.WriteSettings()
	var hb bytes.Buffer
	enc := hpack.NewEncoder(&hb)
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				fr.WriteSettingsAck()
			}
		case *http2.PingFrame:
			if !f.IsAck() {
				fr.WritePing(true, f.Data)
			}
		case *http2.MetaHeadersFrame:
			id := f.StreamID
			if f.PseudoValue("path") == "/mid" {
				hb.Reset()
				enc.WriteField(hpack.HeaderField{Name: ":status", Value: "200"})
				enc.WriteField(hpack.HeaderField{Name: "content-type", Value: "application/grpc"})
				fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: hb.Bytes(), EndHeaders: true})
				fr.WriteData(id, false, []byte("partial"))
			}
			fr.WriteRSTStream(id, http2.ErrCodeCancel)
		}
	}
}

// TestH2UpstreamResetForwarded: an HTTP/2 upstream's RST_STREAM CANCEL
// (a gRPC server whose call's deadline passed) reaches an HTTP/2 client as
// RST_STREAM CANCEL, before the response head and in the middle of the
// body, over h2c and TLS on every engine; an HTTP/1.1 client still gets
// 502 for the first. Before, the client got a 502 (which gRPC reads as
// Unavailable, not DeadlineExceeded) or a reset with INTERNAL_ERROR. This also notices if Go's
// transport stops marking resets as "received from peer" (h2FromPeer).
func TestH2UpstreamResetForwarded(t *testing.T) {
	addr := resetOrigin(t)
	h2cAddr, tlsAddr, ca := startProxyH2With(t, UpstreamOptions{Name: "reset", Targets: []string{addr}, HTTP2: true})
	h2c := &http.Client{Timeout: testTimeout, Transport: testnet.H2Transport(nil)}
	h2s := &http.Client{Timeout: testTimeout, Transport: testnet.H2Transport(&tls.Config{ServerName: "edge.example", RootCAs: ca.Pool})}
	for _, tc := range []struct {
		name, base string
		c          *http.Client
	}{{"h2c", "http://" + h2cAddr, h2c}, {"tls", "https://" + tlsAddr, h2s}} {
		for _, path := range []string{"/head", "/mid"} {
			resp, err := tc.c.Do(mustReq(t, "POST", tc.base+path))
			status := 0
			if err == nil {
				status = resp.StatusCode
				_, err = io.ReadAll(resp.Body)
				resp.Body.Close()
			}
			var se http2.StreamError
			if !errors.As(err, &se) || se.Code != http2.ErrCodeCancel {
				t.Errorf("%s %s: status %d, err %v; want the stream reset with CANCEL", tc.name, path, status, err)
			}
		}
	}
	// An HTTP/1.1 client has no stream to reset: 502.
	h1 := &http.Client{Timeout: testTimeout}
	resp, body := get(t, h1, mustReq(t, "GET", "http://"+h2cAddr+"/head"))
	if resp.StatusCode != 502 {
		t.Errorf("HTTP/1.1 client: %d %q, want 502", resp.StatusCode, body)
	}
}

// TestH2UpstreamClientReset: an HTTP/2 client that resets its stream (a
// cancelled gRPC call) while the upstream waits cancels the upstream's
// stream too, before the response head and after it, over h2c and TLS on
// every engine. Before, the upstream stream stayed open until the
// upstream wrote again (here: never, until its cap).
func TestH2UpstreamClientReset(t *testing.T) {
	started, ended := make(chan struct{}, 4), make(chan string, 4)
	l := testnet.Listen(t)
	srv := &http.Server{ReadHeaderTimeout: testTimeout, Protocols: new(http.Protocols),
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			started <- struct{}{}
			if r.URL.Path == "/mid" {
				w.WriteHeader(200)
				w.(http.Flusher).Flush()
			}
			select {
			case <-r.Context().Done():
				ended <- "cancelled"
			case <-time.After(5 * testTimeout):
				ended <- "not cancelled"
			}
		})}
	srv.Protocols.SetUnencryptedHTTP2(true)
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	// The response-header timeout (and the total, 60 s) must not be
	// what ends the waiting upstream stream before the check's bound.
	h2cAddr, tlsAddr, ca := startProxyH2With(t, UpstreamOptions{Name: "wait", Targets: []string{l.Addr().String()},
		HTTP2: true, ResponseHeaderTimeout: 5 * testTimeout})
	h2c := &http.Client{Transport: testnet.H2Transport(nil)}
	h2s := &http.Client{Transport: testnet.H2Transport(&tls.Config{ServerName: "edge.example", RootCAs: ca.Pool})}
	for _, tc := range []struct {
		name, base string
		c          *http.Client
	}{{"h2c", "http://" + h2cAddr, h2c}, {"tls", "https://" + tlsAddr, h2s}} {
		for _, path := range []string{"/head", "/mid"} {
			ctx, cancel := context.WithCancel(context.Background())
			req := mustReq(t, "POST", tc.base+path).WithContext(ctx)
			done := make(chan error, 1)
			head := make(chan struct{})
			go func() {
				resp, err := tc.c.Do(req)
				close(head)
				if err == nil {
					_, err = io.ReadAll(resp.Body)
					resp.Body.Close()
				}
				done <- err
			}()
			select {
			case <-started:
			case <-time.After(testTimeout):
				t.Fatalf("%s %s: the request did not reach the upstream", tc.name, path)
			}
			if path == "/mid" {
				<-head // the 200 came through: cancel while the body waits
			}
			cancel()
			if err := <-done; err == nil {
				t.Errorf("%s %s: the cancelled request succeeded", tc.name, path)
			}
			select {
			case got := <-ended:
				if got != "cancelled" {
					t.Errorf("%s %s: upstream handler %s", tc.name, path, got)
				}
			case <-time.After(testTimeout):
				t.Fatalf("%s %s: the upstream handler did not end within %v", tc.name, path, testTimeout)
			}
		}
	}
}
