package server

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/internal/testnet"
	"github.com/simdedge/simdedge/server/access"
	"github.com/simdedge/simdedge/server/edgetls"
)

// h2Handler answers "/" inline with a fixed body (like a respond route),
// echoes request bodies on a goroutine (POST), and serves /big (1 MiB)
// and /slow (waits for its body) for flow-control tests.
func h2Handler() Handler {
	return h2TestHandler{}
}

type h2TestHandler struct{}

func (h2TestHandler) InlineHandler(r *Request) Handler {
	if string(r.Method()) == "GET" && string(r.Target()) == "/" {
		return h2TestHandler{}
	}
	return nil
}

const h2BigSize = 1 << 20

func (h2TestHandler) ServeEdge(w *ResponseWriter, r *Request) {
	switch {
	case string(r.Target()) == "/big":
		w.AddHeader("Content-Type", "application/octet-stream")
		chunk := bytes.Repeat([]byte("x"), 1<<14)
		for i := 0; i < h2BigSize/len(chunk); i++ {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	case string(r.Method()) == "POST" || string(r.Method()) == "PUT":
		b, err := r.BodyBytes()
		if err != nil {
			w.WriteHeader(StatusFor(err))
			return
		}
		w.AddHeader("Content-Type", "text/plain")
		w.Write(b)
	default:
		w.AddHeader("Content-Type", "text/plain")
		fmt.Fprintf(w, "hello h2=%v host=%s", r.HTTP2(), r.Host())
	}
}

// startH2C serves h on an h2c listener on the test engine.
func startH2C(t testing.TB, h Handler, o Options) (*Server, string) {
	t.Helper()
	testenv.CheckGoroutines(t)
	o.Handler = h
	s := New(o)
	l := testnet.Listen(t)
	s.EnableH2C(l)
	done := make(chan error, 1)
	go func() { done <- s.ServeTCP(l, testEngine) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		s.Shutdown(ctx)
		if err := <-done; err != ErrServerClosed {
			t.Errorf("ServeTCP returned %v", err)
		}
	})
	return s, l.Addr().String()
}

// startH2TLS serves h with TLS offering h2 by ALPN.
func startH2TLS(t *testing.T, h Handler) (*pki, string) {
	t.Helper()
	p := newPKI(t)
	_, addr := startTLS(t, h, edgetls.Options{Certificates: certFiles(p.a), ALPN: []string{"h2", "http/1.1"}})
	return p, addr
}

// h2cClient is x/net/http2's client speaking h2c with prior knowledge.
func h2cClient() *http.Client {
	return &http.Client{Timeout: testTimeout, Transport: testnet.H2Transport(nil)}
}

func h2Get(t *testing.T, c *http.Client, url string) (*http.Response, string) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// TestH2CGoClient: x/net/http2's client gets inline and goroutine answers,
// a 1 MiB body past the initial windows, and an echoed 300 KiB upload.
func TestH2CGoClient(t *testing.T) {
	_, addr := startH2C(t, h2Handler(), Options{})
	c := h2cClient()
	resp, body := h2Get(t, c, "http://"+addr+"/")
	if resp.ProtoMajor != 2 || body != "hello h2=true host="+addr {
		t.Fatalf("GET /: proto %d body %q", resp.ProtoMajor, body)
	}
	resp, body = h2Get(t, c, "http://"+addr+"/big")
	if len(body) != h2BigSize || resp.ContentLength != -1 && resp.ContentLength != h2BigSize {
		t.Fatalf("GET /big: %d bytes, content-length %d", len(body), resp.ContentLength)
	}
	up := bytes.Repeat([]byte("0123456789"), 30<<10)
	resp, err := c.Post("http://"+addr+"/echo", "text/plain", bytes.NewReader(up))
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || !bytes.Equal(got, up) {
		t.Fatalf("POST echo: %d bytes back of %d, %v", len(got), len(up), err)
	}
}

// TestH2TLSGoClient: h2 by ALPN on a TLS listener.
func TestH2TLSGoClient(t *testing.T) {
	p, addr := startH2TLS(t, h2Handler())
	c := &http.Client{Timeout: testTimeout, Transport: testnet.H2Transport(&tls.Config{ServerName: "a.example", RootCAs: p.ca.Pool})}
	resp, body := h2Get(t, c, "https://"+addr+"/")
	if resp.ProtoMajor != 2 || !strings.HasPrefix(body, "hello h2=true") {
		t.Fatalf("GET /: proto %d body %q", resp.ProtoMajor, body)
	}
	_, body = h2Get(t, c, "https://"+addr+"/big")
	if len(body) != h2BigSize {
		t.Fatalf("GET /big: %d bytes", len(body))
	}
}

// TestH2CDisabled: without EnableH2C the preface keeps today's answer
// (505).
func TestH2CDisabled(t *testing.T) {
	_, addr := startTCP(t, h2Handler(), Options{})
	c := dial(t, addr)
	io.WriteString(c, h2Preface)
	b, _ := io.ReadAll(c)
	if !strings.HasPrefix(string(b), "HTTP/1.1 505") {
		t.Fatalf("preface without h2c: %q", b)
	}
}

// h2specPath finds h2spec, skipping (or failing under REQUIRE_H2SPEC)
// when it is missing.
func h2specPath(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("h2spec")
	if err != nil {
		if home, herr := os.UserHomeDir(); herr == nil {
			if _, serr := os.Stat(home + "/go/bin/h2spec"); serr == nil {
				p, err = home+"/go/bin/h2spec", nil
			}
		}
	}
	testenv.Need(t, "REQUIRE_H2SPEC", err == nil, "h2spec not found (go install github.com/summerwind/h2spec/cmd/h2spec@latest)")
	return p
}

// h2specTimeout bounds one h2spec case's wait (its -o option, seconds).
const h2specTimeout = "3"

func runH2spec(t *testing.T, bin, addr string, useTLS bool) {
	t.Helper()
	host, port, _ := net.SplitHostPort(addr)
	args := []string{"-h", host, "-p", port, "-o", h2specTimeout, "-j", t.TempDir() + "/report.xml"}
	if useTLS {
		args = append(args, "-t", "-k")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte(" 0 failed")) {
		t.Fatalf("h2spec failed (%v):\n%s", err, h2specFailures(out))
	}
	t.Logf("h2spec: %s", lastLine(out))
}

// h2specFailures keeps the report's failure section.
func h2specFailures(out []byte) string {
	if i := bytes.Index(out, []byte("Failures:")); i >= 0 {
		return string(out[i:])
	}
	return string(out)
}

func lastLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	return s[strings.LastIndexByte(s, '\n')+1:]
}

// TestH2Spec runs the HTTP/2 conformance suite over h2c and over TLS;
// every case must pass.
func TestH2Spec(t *testing.T) {
	bin := h2specPath(t)
	t.Run("h2c", func(t *testing.T) {
		_, addr := startH2C(t, h2Handler(), Options{})
		runH2spec(t, bin, addr, false)
	})
	t.Run("tls", func(t *testing.T) {
		_, addr := startH2TLS(t, h2Handler())
		runH2spec(t, bin, addr, true)
	})
}

// TestH2RequestClone: a clone of an HTTP/2 request owns its head, which
// Clone rebuilds as HTTP/1.1 to re-parse (an HTTP/2 head has no wire form).
func TestH2RequestClone(t *testing.T) {
	clones := make(chan *Request, 1)
	_, addr := startH2C(t, HandlerFunc(func(w *ResponseWriter, r *Request) {
		clones <- r.Clone()
	}), Options{})
	req, _ := http.NewRequest("GET", "http://"+addr+"/c?x=1", nil)
	req.Header.Set("X-Test", "v")
	resp, err := h2cClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	c := <-clones
	if v, _ := c.Header("x-test"); string(c.Method()) != "GET" || string(c.Target()) != "/c?x=1" || string(c.Host()) != addr || string(v) != "v" {
		t.Fatalf("clone: %s %s host %s x-test %q", c.Method(), c.Target(), c.Host(), v)
	}
}

// TestH2CWithListenerPolicy: h2c on a listener wrapped with allow/deny
// rules (WithPolicy) takes the preface on every engine. The loop looked h2c
// up under the unwrapped listener, while EnableH2C was given the wrapped
// one (as cmd/simdedge does), so it answered 505.
func TestH2CWithListenerPolicy(t *testing.T) {
	testenv.CheckGoroutines(t)
	s := New(Options{Handler: h2Handler()})
	raw := testnet.Listen(t)
	l := WithPolicy(raw, ListenerPolicy{Rules: access.Rules{
		Deny: access.NewPrefixes([]netip.Prefix{netip.MustParsePrefix("192.0.2.66/32")})}})
	s.EnableH2C(l)
	done := make(chan error, 1)
	go func() { done <- s.ServeTCP(l, testEngine) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		s.Shutdown(ctx)
		if err := <-done; err != ErrServerClosed {
			t.Errorf("ServeTCP returned %v", err)
		}
	})
	resp, body := h2Get(t, h2cClient(), "http://"+raw.Addr().String()+"/")
	if resp.ProtoMajor != 2 || !strings.HasPrefix(body, "hello h2=true") {
		t.Fatalf("GET / over h2c behind a listener policy: proto %d body %q", resp.ProtoMajor, body)
	}
}
