package asm

import (
	"errors"
	"math/bits"
	"slices"
)

// MaxClasses is the most classes one ClassTable can describe: each class is
// reported as its own bit mask, and class membership is computed from 8-bit
// table entries.
const MaxClasses = 8

// BlockSize is the number of input bytes summarised by one mask word.
const BlockSize = 64

// Errors returned by NewClassTable.
var (
	ErrTooManyClasses = errors.New("asm: more than 8 classes")
	ErrNoClasses      = errors.New("asm: no classes")
	// ErrTableFull means the classes together need more than 8 nibble
	// rectangles (see ClassTable); split them across two tables.
	ErrTableFull = errors.New("asm: classes need more than 8 nibble rectangles")
)

// ClassTable describes up to 8 byte classes in the form the nibble-lookup
// (vpshufb) kernels use: two 16-entry tables lo and hi indexed by a byte's
// low and high nibble, and one selector per class. A byte b belongs to class
// c exactly when lo[b&15] & hi[b>>4] & sel[c] != 0.
//
// Each of the 8 table bits stands for one "rectangle" of the 16x16 nibble
// grid (a set of high nibbles times a set of low nibbles); a class is a union
// of rectangles, shared between classes where they coincide. NewClassTable
// finds that decomposition for arbitrary byte sets, so callers describe
// classes as predicates and never build nibble tables by hand.
//
// A ClassTable is immutable after construction and safe for concurrent use.
type ClassTable struct {
	// k is the table the assembly reads, laid out as lo[0:16], hi[16:32],
	// sel[32:40]; its layout is part of the kernels' contract.
	k [48]byte
	n int
	// lut[b] has bit c set when b is in class c; the pure-Go twin and
	// Class use it.
	lut [256]uint8
}

// rect is a set of high nibbles (rows) times a set of low nibbles (cols).
type rect struct{ rows, cols uint16 }

// NewClassTable builds a table for the given classes, in order: class i is
// reported as mask i by Classify.
func NewClassTable(classes ...func(b byte) bool) (*ClassTable, error) {
	if len(classes) == 0 {
		return nil, ErrNoClasses
	}
	if len(classes) > MaxClasses {
		return nil, ErrTooManyClasses
	}
	t := &ClassTable{n: len(classes)}
	var pool []rect
	for c, in := range classes {
		var grid [16]uint16 // grid[hi] has bit lo set when hi<<4|lo is in the class
		for b := 0; b < 256; b++ {
			if in(byte(b)) {
				grid[b>>4] |= 1 << (b & 15)
				t.lut[b] |= 1 << c
			}
		}
		rs, ok := coverClass(grid, &pool)
		if !ok {
			return nil, ErrTableFull
		}
		var sel byte
		for _, i := range rs {
			sel |= 1 << i
		}
		t.k[32+c] = sel
	}
	for i, r := range pool {
		for n := 0; n < 16; n++ {
			if r.rows&(1<<n) != 0 {
				t.k[16+n] |= 1 << i
			}
			if r.cols&(1<<n) != 0 {
				t.k[n] |= 1 << i
			}
		}
	}
	// The decomposition is exact by construction; check it anyway, since a
	// wrong table would silently misclassify in every kernel.
	for b := 0; b < 256; b++ {
		v := t.k[b&15] & t.k[16+b>>4]
		for c := 0; c < t.n; c++ {
			if (v&t.k[32+c] != 0) != (t.lut[b]&(1<<c) != 0) {
				panic("asm: internal error: class table decomposition is not exact")
			}
		}
	}
	return t, nil
}

// MustClassTable is NewClassTable for tables built from constant predicates
// at package initialisation; it panics on error.
func MustClassTable(classes ...func(b byte) bool) *ClassTable {
	t, err := NewClassTable(classes...)
	if err != nil {
		panic(err)
	}
	return t
}

// coverClass covers the cells of grid (grid[hi] has bit lo set for each
// byte hi<<4|lo in the class) with rectangles that lie inside the class,
// reusing rectangles already in the pool where they fit, and returns their
// pool indexes. It is a greedy weighted set cover: candidates are the pool's
// rectangles that fit (free) and, for every distinct row pattern, the
// rectangle of that pattern times all rows containing it (and the same for
// columns); each step takes the candidate covering the most uncovered cells,
// preferring free ones. ok is false when the pool would exceed 8.
func coverClass(grid [16]uint16, pool *[]rect) (idx []int, ok bool) {
	inside := func(r rect) bool {
		for h := 0; h < 16; h++ {
			if r.rows&(1<<h) != 0 && grid[h]&r.cols != r.cols {
				return false
			}
		}
		return true
	}
	var cands []rect
	add := func(r rect) {
		if r.rows != 0 && r.cols != 0 && indexRect(cands, r) < 0 {
			cands = append(cands, r)
		}
	}
	cols := transpose(grid)
	for _, pat := range grid {
		var rows uint16
		for h, p := range grid {
			if p&pat == pat {
				rows |= 1 << h
			}
		}
		add(rect{rows, pat})
	}
	for _, pat := range cols {
		var cs uint16
		for l, p := range cols {
			if p&pat == pat {
				cs |= 1 << l
			}
		}
		add(rect{pat, cs})
	}
	uncovered := grid
	count := func(r rect) int {
		n := 0
		for h := 0; h < 16; h++ {
			if r.rows&(1<<h) != 0 {
				n += bits.OnesCount16(uncovered[h] & r.cols)
			}
		}
		return n
	}
	for uncovered != ([16]uint16{}) {
		best, bestN, bestFree := rect{}, 0, false
		for _, r := range *pool {
			if n := count(r); n > bestN && inside(r) {
				best, bestN, bestFree = r, n, true
			}
		}
		if !bestFree {
			for _, r := range cands {
				if n := count(r); n > bestN {
					best, bestN = r, n
				}
			}
		}
		i := indexRect(*pool, best)
		if i < 0 {
			if len(*pool) == MaxClasses {
				return nil, false
			}
			*pool = append(*pool, best)
			i = len(*pool) - 1
		}
		if !slices.Contains(idx, i) {
			idx = append(idx, i)
		}
		for h := 0; h < 16; h++ {
			if best.rows&(1<<h) != 0 {
				uncovered[h] &^= best.cols
			}
		}
	}
	return idx, true
}

func transpose(g [16]uint16) (t [16]uint16) {
	for r := 0; r < 16; r++ {
		for c := 0; c < 16; c++ {
			if g[r]&(1<<c) != 0 {
				t[c] |= 1 << r
			}
		}
	}
	return t
}

func indexRect(pool []rect, r rect) int {
	for i, p := range pool {
		if p == r {
			return i
		}
	}
	return -1
}

// Classes reports the number of classes in t.
func (t *ClassTable) Classes() int { return t.n }

// Class returns the classes of b as a bit set: bit c is set when b is in
// class c.
func (t *ClassTable) Class(b byte) uint8 { return t.lut[b] }

// ClassifiedLen is the number of mask words Classify writes for n input
// bytes and the given number of classes.
func ClassifiedLen(n, classes int) int {
	return (n + BlockSize - 1) / BlockSize * classes
}

// Classify computes class bit masks over src. For each 64-byte block i of
// src and each class c of t, dst[i*t.Classes()+c] gets bit j set exactly
// when src[i*64+j] is in class c. Bits for positions past len(src) in the
// last block are zero. It returns the number of words written,
// ClassifiedLen(len(src), t.Classes()), and panics if dst is shorter.
func Classify(dst []uint64, src []byte, t *ClassTable) int {
	n := ClassifiedLen(len(src), t.n)
	if len(dst) < n {
		panic("asm: Classify: dst too short")
	}
	if len(src) == 0 {
		return 0
	}
	classify(dst[:n], src, t)
	return n
}
