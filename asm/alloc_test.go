package asm

import "testing"

func TestNoAllocations(t *testing.T) {
	src := make([]byte, 1000)
	for i := range src {
		src[i] = byte(i)
	}
	dst := make([]byte, len(src))
	tab := MustClassTable(testTables["http"]...)
	masks := make([]uint64, ClassifiedLen(len(src), tab.Classes()))
	u16, u32 := make([]uint16, 300), make([]uint32, 300)
	s := string(src)
	forEachLevel(t, func(l Level) {
		for name, f := range map[string]func(){
			"Classify":              func() { Classify(masks, src, tab) },
			"IndexTabNewline":       func() { IndexTabNewline(src) },
			"IndexTabNewlineString": func() { IndexTabNewlineString(s) },
			"IndexNotInRange":       func() { IndexNotInRange(src, 1, 200) },
			"ValidASCIIString":      func() { ValidASCIIString(s) },
			"ToLower":               func() { ToLower(dst, src) },
			"PrefixSum8":            func() { PrefixSum8(dst, src, 0) },
			"ExclusivePrefixSum16":  func() { ExclusivePrefixSum16(u16, u16, 0) },
			"PrefixSum32":           func() { PrefixSum32(u32, u32, 0) },
		} {
			if a := testing.AllocsPerRun(100, f); a != 0 {
				t.Errorf("%v %s: %v allocations per call, want 0", l, name, a)
			}
		}
	})
}

// TestStackDestinations checks that kernels do not make their arguments
// escape: a caller may classify into a mask array on its stack.
func TestStackDestinations(t *testing.T) {
	tab := MustClassTable(testTables["http"]...)
	src := []byte("GET / HTTP/1.1\r\nHost: example.com\r\n\r\n")
	forEachLevel(t, func(l Level) {
		if a := testing.AllocsPerRun(100, func() {
			var masks [2 * MaxClasses]uint64
			var dst [64]byte
			Classify(masks[:], src, tab)
			ToLower(dst[:], src)
			PrefixSum8(dst[:], dst[:], 0)
		}); a != 0 {
			t.Errorf("%v: %v allocations per call with stack destinations, want 0", l, a)
		}
	})
}
