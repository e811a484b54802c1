package proxy

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/internal/testnet"
	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/access"
)

// TestUntrustedForwarding: X-Real-IP and Forwarded sent by a client pass
// to the upstream only as untrusted_forwarding says (issue 27): dropped
// (the default) or overwritten from a peer outside trusted_proxies, kept
// (and Forwarded extended, in overwrite mode) from a trusted one, and
// passed as received with pass; on both proxy paths.
func TestUntrustedForwarding(t *testing.T) {
	const (
		spoofIP  = "203.0.113.9"
		spoofFwd = "for=203.0.113.9;proto=https"
	)
	for _, tc := range []struct {
		mode          Forwarding
		trusted       bool
		realIP, fwded string // what the upstream must see ("" none)
	}{
		{ForwardingDrop, false, "", ""},
		{ForwardingDrop, true, spoofIP, spoofFwd},
		{ForwardingOverwrite, false, "127.0.0.1", `for=127.0.0.1;host="HOST";proto=http`},
		{ForwardingOverwrite, true, spoofIP, spoofFwd + `, for=127.0.0.1;host="HOST";proto=http`},
		{ForwardingPass, false, spoofIP, spoofFwd},
	} {
		t.Run(fmt.Sprintf("mode=%d/trusted=%v", tc.mode, tc.trusted), func(t *testing.T) {
			testenv.CheckGoroutines(t)
			o := startOrigin(t, headerEcho)
			so := server.Options{}
			if tc.trusted {
				so.TrustedProxies = access.NewPrefixes([]netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")})
			}
			addr, _ := startProxyWith(t, UpstreamOptions{Targets: []string{o.addr}}, so, Options{UntrustedForwarding: tc.mode})
			for _, send := range []bool{true, false} {
				req, _ := http.NewRequest("GET", "http://"+addr+"/", nil)
				if send {
					req.Header.Set("X-Real-IP", spoofIP)
					req.Header.Set("Forwarded", spoofFwd)
				}
				_, b := get(t, client(t), req)
				var e echoed
				if err := json.Unmarshal(b, &e); err != nil {
					t.Fatalf("%v: %s", err, b)
				}
				realIP, fwded := tc.realIP, strings.ReplaceAll(tc.fwded, "HOST", addr)
				if !send {
					// Nothing received: only overwrite writes them.
					realIP, fwded = "", ""
					if tc.mode == ForwardingOverwrite {
						realIP, fwded = "127.0.0.1", fmt.Sprintf(`for=127.0.0.1;host="%s";proto=http`, addr)
					}
				}
				if got := e.Header.Values("X-Real-Ip"); strings.Join(got, "|") != realIP {
					t.Errorf("sent=%v: upstream X-Real-IP %q, want %q", send, got, realIP)
				}
				if got := e.Header.Values("Forwarded"); strings.Join(got, "|") != fwded {
					t.Errorf("sent=%v: upstream Forwarded %q, want %q", send, got, fwded)
				}
			}
		})
	}
}

// TestUntrustedForwardingH2: the default (drop) holds for HTTP/2
// clients, over h2c and TLS, on both proxy paths.
func TestUntrustedForwardingH2(t *testing.T) {
	testenv.CheckGoroutines(t)
	o := startOrigin(t, headerEcho)
	h2cAddr, tlsAddr, ca := startProxyH2(t, []string{o.addr})
	for _, tc := range []struct {
		base string
		c    *http.Client
	}{
		{"http://" + h2cAddr, &http.Client{Timeout: testTimeout, Transport: testnet.H2Transport(nil)}},
		{"https://" + tlsAddr, &http.Client{Timeout: testTimeout, Transport: testnet.H2Transport(&tls.Config{ServerName: "edge.example", RootCAs: ca.Pool})}},
	} {
		req, _ := http.NewRequest("GET", tc.base+"/", nil)
		req.Header.Set("X-Real-IP", "203.0.113.9")
		req.Header.Set("Forwarded", "for=203.0.113.9")
		resp, b := get(t, tc.c, req)
		var e echoed
		if err := json.Unmarshal(b, &e); err != nil || resp.ProtoMajor != 2 {
			t.Fatalf("%s: HTTP/%d %v: %s", tc.base, resp.ProtoMajor, err, b)
		}
		if v, f := e.Header.Get("X-Real-Ip"), e.Header.Get("Forwarded"); v != "" || f != "" {
			t.Errorf("%s: upstream got X-Real-IP %q Forwarded %q from an untrusted client", tc.base, v, f)
		}
	}
}
