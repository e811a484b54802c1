package asm

import (
	"os"
	"slices"
	"syscall"
	"testing"
)

// guarded maps three pages and makes the first and last inaccessible, so
// any access just outside the middle page faults. It returns the middle
// page.
func guarded(t *testing.T) []byte {
	t.Helper()
	ps := os.Getpagesize()
	mem, err := syscall.Mmap(-1, 0, 3*ps, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Skipf("mmap: %v", err)
	}
	t.Cleanup(func() { syscall.Munmap(mem) })
	if err := syscall.Mprotect(mem[:ps], syscall.PROT_NONE); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mprotect(mem[2*ps:], syscall.PROT_NONE); err != nil {
		t.Fatal(err)
	}
	return mem[ps : 2*ps : 2*ps]
}

// TestGuardPages runs every kernel on buffers that end exactly at an
// inaccessible page or start exactly after one. A kernel that reads or
// writes outside its buffer crashes the test binary here.
func TestGuardPages(t *testing.T) {
	page := guarded(t)
	for i := range page {
		page[i] = byte(i*7) | 0x40 // letters and symbols, no tab/newline
	}
	http := MustClassTable(testTables["http"]...)
	masks := make([]uint64, ClassifiedLen(len(page), http.Classes()))
	dst := make([]byte, len(page))
	for n := 0; n <= maxTestLen; n++ {
		for _, b := range [][]byte{page[len(page)-n:], page[:n]} {
			forEachLevel(t, func(l Level) {
				Classify(masks, b, http)
				if got, want := IndexTabNewline(b), refIndexTabNewline(b); got != want {
					t.Fatalf("%v len %d: IndexTabNewline = %d, want %d", l, n, got, want)
				}
				if got, want := IndexNotInRange(b, 0x41, 0x7a), refIndexNotInRange(b, 0x41, 0x7a); got != want {
					t.Fatalf("%v len %d: IndexNotInRange = %d, want %d", l, n, got, want)
				}
				ToLower(dst, b)
				// In place writes into the guarded page itself.
				ToLowerInPlace(b)
				PrefixSum8(b, b, 1)
				ExclusivePrefixSum8(b, b, 1)
			})
			for i := range b {
				b[i] = byte(i*7) | 0x40
			}
		}
	}
	// Wider lanes: views of the page as uint16 and uint32.
	for n := 0; n <= maxTestLen/4; n++ {
		forEachLevel(t, func(l Level) {
			u16 := unsafeU16(page)
			u32 := unsafeU32(page)
			PrefixSum16(u16[len(u16)-n:], u16[len(u16)-n:], 3)
			ExclusivePrefixSum16(u16[:n], u16[:n], 3)
			PrefixSum32(u32[len(u32)-n:], u32[len(u32)-n:], 5)
			ExclusivePrefixSum32(u32[:n], u32[:n], 5)
		})
	}
	// JSONIndex reads its input against both edges of the page and writes
	// positions and masks against both of its edges.
	for n := 0; n <= maxTestLen; n++ {
		forEachJSONKernel(t, func(string) {
			blocks := (n + BlockSize - 1) / BlockSize
			for _, b := range [][]byte{page[len(page)-n:], page[:n]} {
				var c JSONCarry
				JSONIndex(make([]uint32, blocks*BlockSize), make([]uint64, blocks*JSONMaskWords), b, 0, &c)
			}
			if n%BlockSize != 0 {
				return
			}
			src := slices.Clone(page[:n])
			u64, u32 := unsafeU64(page), unsafeU32(page)
			var c JSONCarry
			JSONIndex(u32[len(u32)-blocks*BlockSize:], u64[len(u64)-blocks*JSONMaskWords:], src, 0, &c)
			JSONIndex(u32[:blocks*BlockSize], u64[:blocks*JSONMaskWords], src, 0, &c)
		})
	}
}
