package xdp

import (
	"bufio"
	"errors"
	"net/netip"
	"strings"
	"testing"
)

func TestConfigDefaultsAndValidation(t *testing.T) {
	c, err := Config{Interface: "eth0", UDPPort: 8081}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Queues) != 1 || c.Queues[0] != 0 || c.Mode != Native || c.RingSize != DefaultRingSize ||
		c.FrameSize != DefaultFrameSize || c.Frames != 2*DefaultRingSize || c.Logger == nil {
		t.Fatalf("defaults: %+v", c)
	}
	ok := Config{Interface: "eth0", TCPPort: 80}
	for name, change := range map[string]func(*Config){
		"no interface":     func(c *Config) { c.Interface = "" },
		"no port":          func(c *Config) { c.TCPPort = 0 },
		"port too large":   func(c *Config) { c.UDPPort = 65536 },
		"bad mode":         func(c *Config) { c.Mode = "offload" },
		"ipv6 address":     func(c *Config) { c.Address = netip.MustParseAddr("2001:db8::1") },
		"ring not pow2":    func(c *Config) { c.RingSize = 1000 },
		"ring too small":   func(c *Config) { c.RingSize = 32 },
		"frame size":       func(c *Config) { c.FrameSize = 3000 },
		"frame too small":  func(c *Config) { c.FrameSize = 1024 },
		"one frame":        func(c *Config) { c.Frames = 1 },
		"duplicate queues": func(c *Config) { c.Queues = []int{1, 1} },
		"negative queue":   func(c *Config) { c.Queues = []int{-1} },
		"queue too large":  func(c *Config) { c.Queues = []int{maxQueues} },
	} {
		c := ok
		change(&c)
		if _, err := c.withDefaults(); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: %v, want ErrConfig", name, err)
		}
	}
}

func TestCapabilities(t *testing.T) {
	status := "Name:\tsimdedge\nCapInh:\t0000000000000000\nCapEff:\t000001ffffffffff\n"
	eff, ok := effectiveCaps(bufio.NewScanner(strings.NewReader(status)))
	if !ok || missingCaps(eff) != "" {
		t.Fatalf("root's capabilities: %x %v, missing %q", eff, ok, missingCaps(eff))
	}
	if got := missingCaps(0); got != "CAP_BPF, CAP_NET_ADMIN, CAP_NET_RAW" {
		t.Fatalf("no capabilities: missing %q", got)
	}
	// CAP_SYS_ADMIN stands in for CAP_BPF (kernels before 5.8).
	if got := missingCaps(1<<capSysAdmin | 1<<capNetAdmin | 1<<capNetRaw); got != "" {
		t.Fatalf("SYS_ADMIN+NET_ADMIN+NET_RAW: missing %q", got)
	}
	if got := missingCaps(1<<capBPF | 1<<capNetRaw); got != "CAP_NET_ADMIN" {
		t.Fatalf("BPF+NET_RAW: missing %q", got)
	}
	if _, ok := effectiveCaps(bufio.NewScanner(strings.NewReader("CapEff:\tzz\n"))); ok {
		t.Fatal("garbage CapEff parsed")
	}
}
