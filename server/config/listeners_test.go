package config

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

const routesOnly = `
routes:
  - match: {path_prefix: /}
    echo: {}
`

func TestListeners(t *testing.T) {
	c, err := Parse([]byte(`listen: "127.0.0.1:8080"
listeners:
  - transport: tcp
    address: "127.0.0.1:8081"
    engine: goroutine
  - transport: xdp
    xdp: {interface: veth0, address: 198.18.0.1, tcp_port: 80, udp_port: 8053, mode: generic}
  - transport: rdma
    address: "127.0.0.1:7471"
    rdma: {provider: shm, credits: 8}
  - transport: rdma
    address: "127.0.0.1:7472"
    rdma: {poll: busy}
  - transport: rdma
    address: "127.0.0.1:7473"
    rdma: {poll: busy, spin: 50us}
` + routesOnly))
	if err != nil {
		t.Fatal(err)
	}
	got := c.EffectiveListeners()
	want := []Listener{
		{Transport: "tcp", Address: "127.0.0.1:8080", Engine: DefaultEngine, Loops: 1},
		{Transport: "tcp", Address: "127.0.0.1:8081", Engine: EngineGoroutine, Loops: 1},
		{Transport: "xdp", XDP: &XDP{Interface: "veth0", Queues: []int{0}, Address: "198.18.0.1", TCPPort: 80, UDPPort: 8053,
			Mode: "generic", RingSize: DefaultXDPRingSize, FrameSize: DefaultXDPFrameSize, Frames: 2 * DefaultXDPRingSize}},
		{Transport: "rdma", Address: "127.0.0.1:7471", RDMA: &RDMA{Provider: "shm", Credits: 8, MessageSize: DefaultRDMAMessage, Poll: RDMAPollBlock}},
		{Transport: "rdma", Address: "127.0.0.1:7472", RDMA: &RDMA{Provider: DefaultRDMAProvider, Credits: DefaultRDMACredits,
			MessageSize: DefaultRDMAMessage, Poll: RDMAPollBusy, Spin: DefaultRDMASpin}},
		{Transport: "rdma", Address: "127.0.0.1:7473", RDMA: &RDMA{Provider: DefaultRDMAProvider, Credits: DefaultRDMACredits,
			MessageSize: DefaultRDMAMessage, Poll: RDMAPollBusy, Spin: Duration(50 * time.Microsecond)}},
	}
	for i := range got {
		got[i].line = 0
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("effective listeners\n got %+v\nwant %+v", got, want)
	}
	// Defaults do not write through to the parsed configuration.
	if c.Listeners[1].XDP.RingSize != 0 || c.Listeners[1].XDP.Queues != nil {
		t.Errorf("defaults leaked into the parsed config: %+v", c.Listeners[1].XDP)
	}
	// The effective form round-trips.
	out, err := c.WithDefaults().YAML()
	if err != nil {
		t.Fatal(err)
	}
	c2, err := Parse(out)
	if err != nil {
		t.Fatalf("effective config does not parse: %v\n%s", err, out)
	}
	got2 := c2.EffectiveListeners()
	for i := range got2 {
		got2[i].line = 0
	}
	if !reflect.DeepEqual(got2, want) {
		t.Errorf("round trip changed the listeners:\n%s", out)
	}
}

func TestListenersDefault(t *testing.T) {
	c, err := Parse([]byte(routesOnly))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.EffectiveListeners(); len(got) != 1 || !reflect.DeepEqual(got[0], Listener{Transport: "tcp", Address: DefaultListen, Engine: DefaultEngine, Loops: 1}) {
		t.Errorf("default listeners %+v", got)
	}
	// With listeners configured and no listen, only they are opened.
	c, err = Parse([]byte("listeners: [{address: \"127.0.0.1:9\"}]\n" + routesOnly))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.EffectiveListeners(); len(got) != 1 || got[0].Transport != "tcp" || got[0].Address != "127.0.0.1:9" {
		t.Errorf("listeners without listen: %+v", got)
	}
}

// TestListenerEngine: the top-level engine is the default of every tcp
// listener, `listen` included; a listener's own engine wins.
func TestListenerEngine(t *testing.T) {
	c, err := Parse([]byte(`listen: "127.0.0.1:1"
engine: goroutine
listeners:
  - address: "127.0.0.1:2"
  - address: "127.0.0.1:3"
    engine: loop
    loops: 4
` + routesOnly))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range c.EffectiveListeners() {
		got = append(got, l.Engine)
	}
	if want := []string{EngineGoroutine, EngineGoroutine, EngineLoop}; !reflect.DeepEqual(got, want) {
		t.Errorf("engines %v, want %v", got, want)
	}
	var loops []int
	for _, l := range c.EffectiveListeners() {
		loops = append(loops, l.Loops)
	}
	if want := []int{1, 1, 4}; !reflect.DeepEqual(loops, want) {
		t.Errorf("loops %v, want %v", loops, want)
	}
	out, err := c.WithDefaults().YAML()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "engine: goroutine\n") || !strings.Contains(string(out), "engine: loop\n") {
		t.Errorf("effective config does not show the engines:\n%s", out)
	}
}

func TestListenerErrors(t *testing.T) {
	for _, tc := range []struct{ yaml, key, msg string }{
		{`listeners: [{transport: quic, address: "127.0.0.1:1"}]`, "listeners[0].transport", "must be"},
		{`listeners: [{transport: tcp}]`, "listeners[0].address", "host:port"},
		{`listeners: [{transport: rdma, address: "127.0.0.1"}]`, "listeners[0].address", "host:port"},
		{`listeners: [{transport: xdp}]`, "listeners[0].xdp", "missing"},
		{`listeners: [{transport: tcp, address: "127.0.0.1:1", xdp: {interface: a}}]`, "listeners[0].xdp", "only for"},
		{`listeners: [{transport: xdp, xdp: {address: 198.18.0.1, udp_port: 9}}]`, "listeners[0].xdp.interface", "missing"},
		{`listeners: [{transport: xdp, xdp: {interface: v, address: "::1", udp_port: 9}}]`, "listeners[0].xdp.address", "IPv4"},
		{`listeners: [{transport: xdp, xdp: {interface: v, address: 198.18.0.1}}]`, "listeners[0].xdp", "tcp_port, udp_port"},
		{`listeners: [{transport: xdp, xdp: {interface: v, address: 198.18.0.1, udp_port: 70000}}]`, "listeners[0].xdp.udp_port", "1-65535"},
		{`listeners: [{transport: xdp, xdp: {interface: v, address: 198.18.0.1, udp_port: 9, mode: turbo}}]`, "listeners[0].xdp.mode", "native"},
		{`listeners: [{transport: xdp, xdp: {interface: v, address: 198.18.0.1, udp_port: 9, ring_size: 1000}}]`, "listeners[0].xdp.ring_size", "power of two"},
		{`listeners: [{transport: xdp, xdp: {interface: v, address: 198.18.0.1, udp_port: 9, frame_size: 1500}}]`, "listeners[0].xdp.frame_size", "2048 or 4096"},
		{`listeners: [{transport: xdp, xdp: {interface: v, address: 198.18.0.1, udp_port: 9, frames: 10}}]`, "listeners[0].xdp.frames", "ring"},
		{`listeners: [{transport: xdp, xdp: {interface: v, address: 198.18.0.1, udp_port: 9, queues: [0, 5000]}}]`, "listeners[0].xdp.queues[1]", "0-1023"},
		{`listeners: [{transport: xdp, xdp: {interface: v, address: 198.18.0.1, udp_port: 9, wat: 1}}]`, "listeners[0].xdp.wat", "unknown key"},
		{`listeners: [{transport: rdma, address: "127.0.0.1:1", rdma: {message_size: 10}}]`, "listeners[0].rdma.message_size", "1024"},
		{`listeners: [{transport: rdma, address: "127.0.0.1:1", rdma: {poll: spin}}]`, "listeners[0].rdma.poll", `"block" or "busy"`},
		{`listeners: [{transport: rdma, address: "127.0.0.1:1", rdma: {spin: 50us}}]`, "listeners[0].rdma.spin", "only with poll: busy"},
		{`listeners: [{transport: rdma, address: "127.0.0.1:1", rdma: {poll: block, spin: 50us}}]`, "listeners[0].rdma.spin", "only with poll: busy"},
		{`listeners: [{transport: rdma, address: "127.0.0.1:1", rdma: {poll: busy, spin: 1s}}]`, "listeners[0].rdma.spin", "1us to 10ms"},
		{`listeners: [{transport: rdma, address: "127.0.0.1:1", rdma: {poll: busy, spin: 1ns}}]`, "listeners[0].rdma.spin", "1us to 10ms"},
		{`listeners: [{transport: rdma, address: "127.0.0.1:1", rdma: {poll: busy, spin: fast}}]`, "listeners[0].rdma.spin", "duration"},
		{`listeners: {transport: tcp}`, "listeners", "must be a list"},
		{`listeners: [{address: "127.0.0.1:1", engine: threads}]`, "listeners[0].engine", `"loop" or "goroutine"`},
		{`listeners: [{transport: rdma, address: "127.0.0.1:1", engine: loop}]`, "listeners[0].engine", "only for transport: tcp"},
		{`engine: fibers`, "engine", `"loop" or "goroutine"`},
		{`listeners: [{address: "127.0.0.1:1", loops: 2000}]`, "listeners[0].loops", "must be 1-1024"},
		{`listeners: [{address: "127.0.0.1:1", loops: -1}]`, "listeners[0].loops", "negative"},
		{`listeners: [{address: "127.0.0.1:1", engine: goroutine, loops: 2}]`, "listeners[0].loops", "only for engine: loop"},
		{"engine: goroutine\nlisteners: [{address: \"127.0.0.1:1\", loops: 2}]", "listeners[0].loops", "only for engine: loop"},
		{`proxy_on_loop: maybe`, "proxy_on_loop", "true or false"},
		{`proxy_on_loop: 1`, "proxy_on_loop", "true or false"},
		{"engine: goroutine\nproxy_on_loop: true", "proxy_on_loop", "engine: loop"},
	} {
		_, err := Parse([]byte(tc.yaml + "\n" + routesOnly))
		var ce *Error
		if !errors.As(err, &ce) {
			t.Errorf("%s: want a *config.Error, got %v", tc.yaml, err)
			continue
		}
		found := false
		for _, e := range unjoin(err) {
			if errors.As(e, &ce) && ce.Key == tc.key && strings.Contains(ce.Msg, tc.msg) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: want %s: ...%s..., got %v", tc.yaml, tc.key, tc.msg, err)
		}
	}
}

func TestTargets(t *testing.T) {
	for target, ok := range map[string]bool{
		"127.0.0.1:9001":                      true,
		"rdma://127.0.0.1:7471?provider=tcp":  true,
		"rdma://[::1]:7471":                   true,
		"127.0.0.1":                           false,
		"rdma://127.0.0.1":                    false,
		"rdma://user@127.0.0.1:7471":          false,
		"rdma://127.0.0.1:7471/path":          false,
		"://127.0.0.1:7471":                   false,
		"rdma://127.0.0.1:7471#frag":          false,
		"rdma://127.0.0.1:99999?provider=tcp": false,
	} {
		if got := validTarget(target); got != ok {
			t.Errorf("validTarget(%q) = %v, want %v", target, got, ok)
		}
	}
}

func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// TestProxyOnLoop: proxy_on_loop reaches server.Options.LoopProxy, the
// default fills in for check, and a listener on the loop engine makes it
// valid even when the top-level engine is goroutine.
func TestProxyOnLoop(t *testing.T) {
	for _, tc := range []struct {
		yaml string
		want bool
	}{
		{"", DefaultProxyOnLoop},
		{"proxy_on_loop: true", true},
		{"proxy_on_loop: false", false},
		{"engine: goroutine\nproxy_on_loop: true\nlisteners: [{address: \"127.0.0.1:1\", engine: loop}]", true},
	} {
		c, err := Parse([]byte(tc.yaml + "\n" + routesOnly))
		if err != nil {
			t.Fatalf("%q: %v", tc.yaml, err)
		}
		if got := c.ServerOptions().LoopProxy; got != tc.want {
			t.Errorf("%q: LoopProxy = %v, want %v", tc.yaml, got, tc.want)
		}
		if e := c.WithDefaults(); e.ProxyOnLoop == nil || *e.ProxyOnLoop != tc.want {
			t.Errorf("%q: effective proxy_on_loop = %v, want %v", tc.yaml, e.ProxyOnLoop, tc.want)
		}
	}
}
