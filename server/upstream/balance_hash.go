package upstream

import (
	"sort"
	"sync/atomic"
)

// maglevSize is the Maglev lookup table's size: a prime (the permutation
// skips must be coprime with it), and at least 64 entries per target up to
// MaxTargets, which keeps the spread between targets within a few per cent
// (the Maglev paper, Eisenbud et al., NSDI 2016, §3.4).
const maglevSize = 65537

// maglevProbes bounds how many table entries a lookup walks past
// ineligible targets before it scans the targets themselves.
const maglevProbes = 64

// Seeds of the two hashes of a target's address (offset and skip of its
// permutation). They are fixed: the table depends only on the addresses
// and weights, so every instance with the same configuration builds the
// same table and sends a key to the same target, across restarts too.
const (
	seedOffset = 0x6d61676c65762d6f // "maglev-o"
	seedSkip   = 0x6d61676c65762d73 // "maglev-s"
)

// maglev is consistent hashing with a Maglev lookup table: each target
// fills table entries in the order of its own permutation, in turns
// weighted by its weight, until the table is full. A key goes to
// table[hash(key) % size]. When a target leaves, its entries are given to
// the others and only a few other entries change, so about 1/N of the keys
// move (TestHashShareMoved measures it).
//
// An ineligible target (ejected, tried, full) is passed over by walking to
// the following entries: deterministic for a key, so its retries and its
// fallback while the target is away are sticky too, and keys of other
// targets do not move at all.
type maglev struct {
	ts    []*Target
	table []uint16
	// next spreads requests without a key over the table.
	next atomic.Uint64
}

func newMaglev(ts []*Target, w []int) *maglev {
	n := len(ts)
	m := &maglev{ts: ts, table: make([]uint16, maglevSize)}
	const empty = 0xffff // MaxTargets < empty
	for i := range m.table {
		m.table[i] = empty
	}
	offset, skip, next := make([]uint64, n), make([]uint64, n), make([]uint64, n)
	wmax := 0
	for i, t := range ts {
		offset[i] = hashString(t.addr, seedOffset) % maglevSize
		skip[i] = hashString(t.addr, seedSkip)%(maglevSize-1) + 1
		wmax = max(wmax, w[i])
	}
	// Targets take turns in address order, not configuration order, so
	// reordering the configuration moves no key.
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return ts[order[a]].addr < ts[order[b]].addr })
	credit := make([]int, n)
	filled := 0
	for filled < maglevSize {
		for _, i := range order {
			// A target takes a turn each time its credit reaches the
			// largest weight: weight w[i] takes w[i]/wmax turns per
			// round.
			credit[i] += w[i]
			if credit[i] < wmax {
				continue
			}
			credit[i] -= wmax
			for {
				c := (offset[i] + next[i]*skip[i]) % maglevSize
				next[i]++
				if m.table[c] == empty {
					m.table[c] = uint16(i)
					filled++
					break
				}
			}
			if filled == maglevSize {
				break
			}
		}
	}
	return m
}

func (m *maglev) pick(p *Pool, key []byte, ex *Exclude, health bool) *Target {
	var h uint64
	if key == nil {
		h = m.next.Add(1) - 1
	} else {
		h = HashKeyBytes(key)
	}
	e := h % maglevSize
	for j := range uint64(maglevProbes) {
		if t := m.ts[m.table[(e+j)%maglevSize]]; p.eligible(t, ex, health) {
			return t
		}
	}
	return scan(p, m.ts, int(h%uint64(len(m.ts))), ex, health)
}

// Lookup returns the target a key maps to when every target is eligible
// (for tests and the admin listener; nil if the pool does not hash).
func (p *Pool) Lookup(key []byte) *Target {
	m, ok := p.bal.(*maglev)
	if !ok {
		return nil
	}
	return m.ts[m.table[HashKeyBytes(key)%maglevSize]]
}

// The fixed hash: 64-bit FNV-1a (a published, seedless function, so any
// instance computes the same value) followed by MurmurHash3's 64-bit
// finaliser, which FNV lacks: without it, keys differing only in their
// last byte land on neighbouring table entries.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// HashKeyBytes is the hash consistent hashing applies to a key.
func HashKeyBytes(b []byte) uint64 {
	h := uint64(fnvOffset)
	for _, c := range b {
		h ^= uint64(c)
		h *= fnvPrime
	}
	return fmix64(h)
}

func hashString(s string, seed uint64) uint64 {
	h := uint64(fnvOffset) ^ seed
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime
	}
	return fmix64(h)
}

func fmix64(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}
