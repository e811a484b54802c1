package netstack

import "sync"

// neighbors maps a peer's IPv4 address to the MAC address its frames came
// from. It replaces ARP for a stack that shares the kernel's address (the
// kernel gets the ARP traffic). It is bounded: a flood of spoofed sources
// evicts arbitrary entries instead of growing the map, and a peer evicted
// that way is learnt again from its next segment (a retransmission at the
// latest).
type neighbors struct {
	limit int

	mu sync.RWMutex
	m  map[[4]byte][6]byte
}

func newNeighbors(limit int) *neighbors {
	return &neighbors{limit: limit, m: make(map[[4]byte][6]byte)}
}

// learn records that ip is reached through mac. The common case, an
// unchanged entry, takes only the read lock, since every received frame
// passes here.
func (n *neighbors) learn(ip [4]byte, mac [6]byte) {
	n.mu.RLock()
	old, ok := n.m[ip]
	n.mu.RUnlock()
	if ok && old == mac {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if _, ok := n.m[ip]; !ok && len(n.m) >= n.limit {
		for k := range n.m { // Go randomises the starting point
			delete(n.m, k)
			break
		}
	}
	n.m[ip] = mac
}

func (n *neighbors) lookup(ip [4]byte) ([6]byte, bool) {
	n.mu.RLock()
	defer n.mu.RUnlock()
	mac, ok := n.m[ip]
	return mac, ok
}

func (n *neighbors) len() int {
	n.mu.RLock()
	defer n.mu.RUnlock()
	return len(n.m)
}
