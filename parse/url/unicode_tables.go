package url

import "sort"

// Lookups in the generated tables of idna_tables.go, and NFC.

// UTS #46 statuses after applying the URL Standard's options:
// deviations are valid (non-transitional) and the STD3 variants are valid
// or mapped (UseSTD3ASCIIRules=false).
const (
	uts46Valid uint8 = iota
	uts46Ignored
	uts46Mapped
	uts46Disallowed
)

type uts46Entry struct {
	lo  rune
	off uint32 // mapping at uts46Mappings[off:off+n], for uts46Mapped
	n   uint8
	st  uint8
}

type decompEntry struct {
	r rune
	d string
}

type composeEntry struct{ a, b, c rune }

type cccEntry struct {
	lo  rune
	ccc uint8
}

type bidiClass uint8

// The Bidi_Class values the Bidi rule distinguishes.
const (
	bidiOther bidiClass = iota
	bidiL
	bidiR
	bidiAL
	bidiEN
	bidiES
	bidiCS
	bidiET
	bidiON
	bidiBN
	bidiNSM
	bidiAN
)

type bidiEntry struct {
	lo    rune
	class bidiClass
}

type joiningType uint8

const (
	joinOther joiningType = iota
	joinL
	joinD
	joinR
	joinT
)

type joiningEntry struct {
	lo rune
	jt joiningType
}

func lookupUTS46(r rune) uts46Entry {
	i := sort.Search(len(uts46Table), func(i int) bool { return uts46Table[i].lo > r }) - 1
	return uts46Table[i]
}

func lookupCCC(r rune) uint8 {
	i := sort.Search(len(cccTable), func(i int) bool { return cccTable[i].lo > r }) - 1
	return cccTable[i].ccc
}

func lookupBidi(r rune) bidiClass {
	i := sort.Search(len(bidiTable), func(i int) bool { return bidiTable[i].lo > r }) - 1
	return bidiTable[i].class
}

func lookupJoining(r rune) joiningType {
	i := sort.Search(len(joiningTable), func(i int) bool { return joiningTable[i].lo > r }) - 1
	if i < 0 {
		return joinOther
	}
	return joiningTable[i].jt
}

// Hangul syllable arithmetic, Unicode §3.12.
const (
	hangulSBase  = 0xAC00
	hangulLBase  = 0x1100
	hangulVBase  = 0x1161
	hangulTBase  = 0x11A7
	hangulLCount = 19
	hangulVCount = 21
	hangulTCount = 28
	hangulNCount = hangulVCount * hangulTCount
	hangulSCount = hangulLCount * hangulNCount
)

// nfc returns rs in Normalization Form C (UAX #15): canonical
// decomposition, canonical ordering, canonical composition. It may reuse
// rs's storage.
func nfc(rs []rune) []rune {
	d := make([]rune, 0, len(rs)+len(rs)/2)
	for _, r := range rs {
		switch {
		case r >= hangulSBase && r < hangulSBase+hangulSCount:
			s := r - hangulSBase
			d = append(d, hangulLBase+s/hangulNCount, hangulVBase+(s%hangulNCount)/hangulTCount)
			if t := s % hangulTCount; t != 0 {
				d = append(d, hangulTBase+t)
			}
		case r >= 0x80:
			i := sort.Search(len(nfcDecomp), func(i int) bool { return nfcDecomp[i].r >= r })
			if i < len(nfcDecomp) && nfcDecomp[i].r == r {
				for _, x := range nfcDecomp[i].d {
					d = append(d, x)
				}
				continue
			}
			d = append(d, r)
		default:
			d = append(d, r)
		}
	}
	// Canonical ordering: stable insertion sort of each run of non-starters.
	for i := 1; i < len(d); i++ {
		c := lookupCCC(d[i])
		if c == 0 {
			continue
		}
		for j := i; j > 0; j-- {
			p := lookupCCC(d[j-1])
			if p == 0 || p <= c {
				break
			}
			d[j], d[j-1] = d[j-1], d[j]
		}
	}
	// Canonical composition.
	out := d[:0]
	starter := -1
	var lastCCC uint8
	for _, r := range d {
		c := lookupCCC(r)
		if starter >= 0 && (len(out)-1 == starter || (lastCCC != 0 && lastCCC < c)) {
			if comp, ok := composePair(out[starter], r); ok {
				out[starter] = comp
				continue
			}
		}
		if c == 0 {
			starter = len(out)
		}
		lastCCC = c
		out = append(out, r)
	}
	return out
}

func composePair(a, b rune) (rune, bool) {
	if a >= hangulLBase && a < hangulLBase+hangulLCount && b >= hangulVBase && b < hangulVBase+hangulVCount {
		return hangulSBase + ((a-hangulLBase)*hangulVCount+(b-hangulVBase))*hangulTCount, true
	}
	if a >= hangulSBase && a < hangulSBase+hangulSCount && (a-hangulSBase)%hangulTCount == 0 &&
		b > hangulTBase && b < hangulTBase+hangulTCount {
		return a + (b - hangulTBase), true
	}
	i := sort.Search(len(nfcCompose), func(i int) bool {
		e := nfcCompose[i]
		return e.a > a || (e.a == a && e.b >= b)
	})
	if i < len(nfcCompose) && nfcCompose[i].a == a && nfcCompose[i].b == b {
		return nfcCompose[i].c, true
	}
	return 0, false
}
