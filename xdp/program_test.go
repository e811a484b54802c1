package xdp

import (
	"net/netip"
	"testing"

	"github.com/simdedge/simdedge/internal/testenv"
)

// loadTestProgram loads the steering program, skipping (failing under
// REQUIRE_XDP) where the process may not load BPF programs.
func loadTestProgram(t *testing.T, addr netip.Addr, tcpPort, udpPort int) *Program {
	t.Helper()
	testenv.NeedRoot(t)
	p, err := LoadProgram(addr, tcpPort, udpPort, 1)
	if err != nil {
		testenv.Need(t, testenv.RequireXDP, false, "cannot load an XDP program: "+err.Error())
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// verdict names where the program sent a frame, read from which counter
// moved: with no device and no socket, a steered frame falls back to the
// kernel, so the return value alone cannot tell steered from passed.
func verdict(t *testing.T, p *Program, frame []byte) string {
	t.Helper()
	before, err := p.Counters()
	if err != nil {
		t.Fatal(err)
	}
	act, err := p.Test(frame)
	if err != nil {
		t.Fatal(err)
	}
	after, err := p.Counters()
	if err != nil {
		t.Fatal(err)
	}
	if act != Pass {
		t.Fatalf("verdict %v without a socket, want pass", act)
	}
	switch {
	case after.Fallback == before.Fallback+1 && after.Passed == before.Passed:
		return "steer"
	case after.Passed == before.Passed+1 && after.Fallback == before.Fallback:
		return "pass"
	}
	t.Fatalf("counters moved oddly: before %+v after %+v", before, after)
	return ""
}

func TestProgramRules(t *testing.T) {
	const tcpPort, udpPort = 8080, 8081
	p := loadTestProgram(t, netip.AddrFrom4(testServerIP), tcpPort, udpPort)
	udp := testFrame{src: testClientIP, dst: testServerIP, sport: 40000, dport: udpPort, payload: []byte("GET / HTTP/1.1\r\n\r\n")}
	tcp := udp
	tcp.proto, tcp.dport = protoTCP, tcpPort
	with := func(f testFrame, change func(*testFrame)) testFrame { change(&f); return f }
	cases := []struct {
		name  string
		frame []byte
		want  string
	}{
		{"udp to the datagram port", udp.build(), "steer"},
		{"tcp to the service port", tcp.build(), "steer"},
		{"tcp, no payload (SYN)", with(tcp, func(f *testFrame) { f.payload = nil }).build(), "steer"},
		{"don't-fragment set", with(udp, func(f *testFrame) { f.fragFlags = 0x4000 }).build(), "steer"},
		{"ethernet padding", with(udp, func(f *testFrame) { f.payload = nil; f.padding = 18 }).build(), "steer"},
		// The program leaves checksums to user space (and the kernel).
		{"bad udp checksum", with(udp, func(f *testFrame) { f.badUDPSum = true }).build(), "steer"},
		{"tcp to another port (ssh)", with(tcp, func(f *testFrame) { f.dport = 22 }).build(), "pass"},
		{"udp to another port", with(udp, func(f *testFrame) { f.dport = 53 }).build(), "pass"},
		{"udp to the tcp port", with(udp, func(f *testFrame) { f.dport = tcpPort }).build(), "pass"},
		{"tcp to the udp port", with(tcp, func(f *testFrame) { f.dport = udpPort }).build(), "pass"},
		{"another address", with(udp, func(f *testFrame) { f.dst = testOtherIP }).build(), "pass"},
		{"icmp", with(udp, func(f *testFrame) { f.proto = 1 }).build(), "pass"},
		{"arp", with(udp, func(f *testFrame) { f.etherType = 0x0806 }).build(), "pass"},
		{"ipv6", with(udp, func(f *testFrame) { f.etherType = 0x86dd }).build(), "pass"},
		{"vlan tag", with(udp, func(f *testFrame) { f.etherType = 0x8100 }).build(), "pass"},
		{"ip options", with(udp, func(f *testFrame) { f.verIHL, f.options = 0x46, 4 }).build(), "pass"},
		{"version 6 in an ipv4 ethertype", with(udp, func(f *testFrame) { f.verIHL = 0x65 }).build(), "pass"},
		{"ihl below 5", with(udp, func(f *testFrame) { f.verIHL = 0x44 }).build(), "pass"},
		{"first fragment (more fragments)", with(udp, func(f *testFrame) { f.fragFlags = 0x2000 }).build(), "pass"},
		{"later fragment (offset)", with(udp, func(f *testFrame) { f.fragFlags = 0x0010 }).build(), "pass"},
		{"ethernet header only", udp.build()[:ethLen], "pass"},
		{"ip header cut short", udp.build()[:ethLen+ipv4Len-1], "pass"},
		{"ip header, no udp header", udp.build()[:ethLen+ipv4Len+udpLen-1], "pass"},
		{"ip header, tcp header cut short", tcp.build()[:ethLen+ipv4Len+tcpMinLen-1], "pass"},
		{"ip total length beyond the frame", with(udp, func(f *testFrame) { f.truncate = 1 }).build(), "pass"},
		{"ip total length below the header", with(udp, func(f *testFrame) { f.totalDelta = -(ipv4Len + udpLen + 1) }).build(), "pass"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := verdict(t, p, c.frame); got != c.want {
				t.Errorf("%s, want %s", got, c.want)
			}
			// User space accepts what the program steers, when the
			// checksums are right (it checks those too).
			k, _, _ := classify(c.frame, testServerIP, false, tcpPort, udpPort)
			if (k != kindOther) != (c.want == "steer") && c.name != "bad udp checksum" {
				t.Errorf("user space classifies as %d, program says %s", k, c.want)
			}
		})
	}
}

func TestProgramDisabledPortsAndAnyAddress(t *testing.T) {
	udp := testFrame{src: testClientIP, dst: testOtherIP, sport: 40000, dport: 9000}
	tcp := udp
	tcp.proto = protoTCP
	// Any address, UDP only.
	p := loadTestProgram(t, netip.Addr{}, 0, 9000)
	if got := verdict(t, p, udp.build()); got != "steer" {
		t.Errorf("udp to any address: %s, want steer", got)
	}
	if got := verdict(t, p, tcp.build()); got != "pass" {
		t.Errorf("tcp with the tcp port disabled: %s, want pass", got)
	}
	// TCP only.
	p = loadTestProgram(t, netip.Addr{}, 9000, 0)
	if got := verdict(t, p, tcp.build()); got != "steer" {
		t.Errorf("tcp: %s, want steer", got)
	}
	if got := verdict(t, p, udp.build()); got != "pass" {
		t.Errorf("udp with the udp port disabled: %s, want pass", got)
	}
}

func TestLoadProgramRejectsBadConfig(t *testing.T) {
	for _, c := range []struct {
		addr             netip.Addr
		tcp, udp, queues int
	}{
		{netip.MustParseAddr("::1"), 1, 1, 1},
		{netip.Addr{}, -1, 1, 1},
		{netip.Addr{}, 1, 70000, 1},
		{netip.Addr{}, 1, 1, 0},
		{netip.Addr{}, 1, 1, maxQueues + 1},
	} {
		if _, err := LoadProgram(c.addr, c.tcp, c.udp, c.queues); err == nil {
			t.Errorf("LoadProgram(%v, %d, %d, %d) succeeded", c.addr, c.tcp, c.udp, c.queues)
		}
	}
}
