package xdp

import "testing"

// TestQUICPeerTable: the PacketConn's table of senders under a stream of
// new ones three times its cap. It never holds more than maxPeers; a
// peer that keeps sending (here once every maxPeers/4 new senders) is
// always known to WriteTo; one that fell silent is forgotten within
// maxPeers new senders. TestHTTP3PeerFloodOverXDP is the same over
// AF_XDP, with a client mid-response.
func TestQUICPeerTable(t *testing.T) {
	c := &packetConn{peers: make(map[udpAddr]*peer), older: make(map[udpAddr]*peer)}
	from := func(ip [4]byte, port uint16) []byte {
		return testFrame{src: ip, dst: testServerIP, sport: port, dport: testUDPPort, payload: []byte("q"), noUDPSum: true}.build()
	}
	active, silent := from(testClientIP, 40000), from(testClientIP, 40001)
	activeAddr, silentAddr := udpAddr{ip: testClientIP, port: 40000}, udpAddr{ip: testClientIP, port: 40001}
	c.learn(nil, active)
	c.learn(nil, silent)
	// One frame rewritten in place for each forged sender: its checksums
	// are not checked by learn.
	forged := from(testOtherIP, 1)
	ip := forged[ethLen+ipSrc:]
	for i := range 3 * maxPeers {
		ip[1], ip[2], ip[3] = byte(i>>16), byte(i>>8), byte(i)
		c.learn(nil, forged)
		if i%(maxPeers/4) == 0 {
			c.learn(nil, active)
		}
		if c.lookup(activeAddr) == nil {
			t.Fatalf("after %d new senders the active peer is unknown", i+1)
		}
		if n := len(c.peers) + len(c.older); n > maxPeers {
			t.Fatalf("after %d new senders the table holds %d, cap %d", i+1, n, maxPeers)
		}
		if i == maxPeers && c.lookup(silentAddr) != nil {
			t.Fatalf("a peer silent for %d new senders is still held", i+1)
		}
	}
}
