package interop

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// Service discovery (issue 32) against a real DNS server: github.com/miekg/dns
// serves A and SRV records on loopback with a TTL of 1 s, the test changes
// them while a client sends requests through the simdedge binary, and the
// pool follows: the requests reach the new targets, none reaches a removed
// one once the change has applied, and none fails.

// zone is the DNS server's records, changed by the test.
type zone struct {
	mu  sync.Mutex
	a   map[string][]string // name -> IPv4 addresses
	srv map[string][]dns.SRV
	// queries counts the questions answered.
	queries atomic.Int64
}

func (z *zone) setA(name string, ips ...string) {
	z.mu.Lock()
	defer z.mu.Unlock()
	z.a[dns.Fqdn(name)] = ips
}

func (z *zone) setSRV(name string, recs ...dns.SRV) {
	z.mu.Lock()
	defer z.mu.Unlock()
	z.srv[dns.Fqdn(name)] = recs
}

// dnsTTL is short so that a change applies within about a second.
const dnsTTL = 1

func (z *zone) ServeDNS(w dns.ResponseWriter, req *dns.Msg) {
	z.queries.Add(1)
	m := new(dns.Msg)
	m.SetReply(req)
	m.Authoritative = true
	z.mu.Lock()
	defer z.mu.Unlock()
	for _, q := range req.Question {
		hdr := dns.RR_Header{Name: q.Name, Class: dns.ClassINET, Ttl: dnsTTL}
		switch q.Qtype {
		case dns.TypeA:
			for _, ip := range z.a[q.Name] {
				h := hdr
				h.Rrtype = dns.TypeA
				m.Answer = append(m.Answer, &dns.A{Hdr: h, A: net.ParseIP(ip)})
			}
		case dns.TypeSRV:
			for _, s := range z.srv[q.Name] {
				h := hdr
				h.Rrtype = dns.TypeSRV
				r := s
				r.Hdr = h
				m.Answer = append(m.Answer, &r)
				// Glue for the targets, as most servers send.
				for _, ip := range z.a[s.Target] {
					m.Extra = append(m.Extra, &dns.A{Hdr: dns.RR_Header{Name: s.Target, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: dnsTTL}, A: net.ParseIP(ip)})
				}
			}
		}
		if _, ok := z.a[q.Name]; !ok && z.srv[q.Name] == nil {
			m.Rcode = dns.RcodeNameError
		}
	}
	w.WriteMsg(m)
}

// startDNS serves z on a loopback UDP port and returns its address.
func startDNS(t *testing.T, z *zone) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &dns.Server{PacketConn: pc, Handler: z}
	go srv.ActivateAndServe()
	t.Cleanup(func() { srv.Shutdown() })
	return pc.LocalAddr().String()
}

// startNamedBackend serves its name on addr.
func startNamedBackend(t *testing.T, addr, name string) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	s := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, name)
	})}
	go s.Serve(ln)
	t.Cleanup(func() { s.Close() })
}

func TestDNSDiscoveryThroughBinary(t *testing.T) {
	for _, e := range []struct{ name, engine, loopProxy string }{
		{"goroutine", "goroutine", "false"},
		{"loop", "loop", "false"},
		{"loop-proxy", "loop", "true"},
	} {
		t.Run(e.name, func(t *testing.T) {
			z := &zone{a: map[string][]string{}, srv: map[string][]dns.SRV{}}
			dnsAddr := startDNS(t, z)
			// A records: the same port on three loopback addresses.
			port := freePort(t)
			for i := 2; i <= 4; i++ {
				startNamedBackend(t, fmt.Sprintf("127.0.0.%d:%d", i, port), fmt.Sprintf("a%d", i))
			}
			// SRV records: three ports on 127.0.0.1, one name each.
			var srvPorts [4]int
			for i := 1; i <= 3; i++ {
				srvPorts[i] = freePort(t)
				startNamedBackend(t, fmt.Sprintf("127.0.0.1:%d", srvPorts[i]), fmt.Sprintf("s%d", i))
				z.setA(fmt.Sprintf("s%d.svc.test", i), "127.0.0.1")
			}
			srv := func(i, weight int) dns.SRV {
				return dns.SRV{Priority: 10, Weight: uint16(weight), Port: uint16(srvPorts[i]), Target: dns.Fqdn(fmt.Sprintf("s%d.svc.test", i))}
			}
			z.setA("api.test", "127.0.0.2", "127.0.0.3")
			z.setSRV("_http._tcp.svc.test", srv(1, 1), srv(2, 1))

			addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
			conf := fmt.Sprintf(`listeners: [{address: %q}]
engine: %s
proxy_on_loop: %s
upstreams:
  - name: byname
    targets: ["api.test:%d"]
    resolve: {servers: [%q], respect_ttl: true, family: ipv4}
  - name: bysrv
    targets: ["dns+srv://_http._tcp.svc.test"]
    resolve: {servers: [%q]}
routes:
  - match: {path_prefix: /a}
    proxy: {upstream: byname}
  - proxy: {upstream: bysrv}
`, addr, e.engine, e.loopProxy, port, dnsAddr, dnsAddr)
			needBinary(t)
			_, out := startSimdedgeOut(t, simdedgeBin, conf, addr)
			c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
			defer c.CloseIdleConnections()

			// Before any change: both paths reach the first answers.
			waitBackends(t, c, "http://"+addr+"/a", []string{"a2", "a3"}, nil)
			waitBackends(t, c, "http://"+addr+"/s", []string{"s1", "s2"}, nil)

			// The changes, under a steady load whose every request must
			// succeed.
			var failures, sent atomic.Int64
			stop := make(chan struct{})
			var wg sync.WaitGroup
			for _, p := range []string{"/a", "/s"} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < loadMax; i++ {
						select {
						case <-stop:
							return
						default:
						}
						sent.Add(1)
						if _, err := get(c, "http://"+addr+p); err != nil {
							failures.Add(1)
							t.Logf("request failed: %v", err)
						}
					}
				}()
			}
			z.setA("api.test", "127.0.0.3", "127.0.0.4")
			z.setSRV("_http._tcp.svc.test", srv(2, 1), srv(3, 3))
			waitBackends(t, c, "http://"+addr+"/a", []string{"a3", "a4"}, []string{"a2"})
			seen := waitBackends(t, c, "http://"+addr+"/s", []string{"s2", "s3"}, []string{"s1"})
			close(stop)
			wg.Wait()
			if f := failures.Load(); f != 0 {
				t.Errorf("%d of %d requests failed during the changes", f, sent.Load())
			}
			// SRV weights: s3 (weight 3) gets more than s2 (weight 1).
			if seen["s3"] <= seen["s2"] {
				t.Errorf("SRV weights not followed: %v", seen)
			}
			if z.queries.Load() == 0 {
				t.Error("the DNS server was never asked")
			}
			// The changes took the path of an xDS endpoint update, which
			// keeps the routing table.
			if log := out.String(); !strings.Contains(log, `"endpoints_only":true`) || strings.Contains(log, `"endpoints_only":false`) {
				t.Errorf("a discovery change rebuilt the routes instead of rebinding the upstreams:\n%s", log)
			}
		})
	}
}

// loadMax bounds the background load's requests per path.
const loadMax = 20000

// get fetches url and returns the body.
func get(c *http.Client, url string) (string, error) {
	resp, err := c.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != 200 {
		return "", fmt.Errorf("status %d: %s", resp.StatusCode, strings.TrimSpace(string(b)))
	}
	return string(b), nil
}

// discoveryWait bounds waiting for a DNS change to apply: the TTL (1 s)
// plus the rebuild, with room for a loaded machine.
const discoveryWait = 15 * time.Second

// waitBackends sends requests to url until a window of 40 consecutive
// answers comes only from want (every one of them) and none from gone,
// within discoveryWait; it returns the counts of that window.
func waitBackends(t *testing.T, c *http.Client, url string, want, gone []string) map[string]int {
	t.Helper()
	const window = 40
	deadline := time.Now().Add(discoveryWait)
	var last map[string]int
	for time.Now().Before(deadline) {
		seen := map[string]int{}
		for range window {
			body, err := get(c, url)
			if err != nil {
				t.Fatalf("request to %s failed: %v", url, err)
			}
			seen[body]++
		}
		last = seen
		ok := len(seen) == len(want)
		for _, w := range want {
			ok = ok && seen[w] > 0
		}
		for _, g := range gone {
			ok = ok && seen[g] == 0
		}
		if ok {
			return seen
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s: backends %v, want exactly %v (gone: %v) within %v", url, last, want, gone, discoveryWait)
	return nil
}
