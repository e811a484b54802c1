package json

import (
	"bytes"
	"encoding/binary"
	stdjson "encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/simdedge/simdedge/asm"
)

// eagerNumbers are number texts around every edge of convertNumber: the
// int64 and uint64 limits, 19 and 20 digits, -0, the exactly representable
// floats and just beyond (2^53, 10^22), exponents far out, underflow and
// overflow.
var eagerNumbers = []string{
	"0", "-0", "1", "-1", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
	"-9223372036854775809", "18446744073709551615", "18446744073709551616", "9999999999999999999",
	"10000000000000000000", "-9999999999999999999", "1234567890123456789", "0.0", "-0.0", "-0e0",
	"1.5", "-2.25", "0.1", "0.3", "1e22", "1e23", "9007199254740992", "9007199254740993",
	"9007199254740993.0", "9007199254740992e1", "1.7976931348623157e308", "1.8e308", "-1e400",
	"4.9e-324", "2e-324", "1e-400", "123456789012345678901234567890", "1.0000000000000000000001",
	"5e-22", "5e-23", "0.000001", "1E+2", "1e-0", "1e00000000000000000000000005", "3.14159265358979",
	"1e-7", "12345678901234567e-10", "123456789012345678e5",
	// Around the inline integers of the index stage (shortInt digits).
	"7", "42", "999", "1000", "9999", "10000", "12345", "0e1", "4E2", "5.5", "10.25",
}

// eagerBadNumbers are texts that the index stage's inline integers must
// leave to the general path, which rejects them.
var eagerBadNumbers = []string{"01", "00", "0012", "1.", "12e", "99E+", "1234.", "12345e", "1x", "9999-"}

// TestEagerSame checks that Options.Eager changes no result: every
// value of every document answers Kind, Int, Uint, Float (to the bit) and
// AppendString exactly as the default parse does.
func TestEagerSame(t *testing.T) {
	docs := []string{"[" + strings.Join(eagerNumbers, ",") + "]"}
	for _, n := range eagerNumbers {
		docs = append(docs, n, `{"k\n`+n+`":`+n+`}`)
	}
	for _, n := range eagerBadNumbers {
		docs = append(docs, n, "["+n+"]", `{"k":`+n+`}`, "[1,"+n+",2]")
	}
	docs = append(docs, fuzzSeeds...)
	for _, tc := range edgeCases {
		docs = append(docs, tc.in)
	}
	for _, name := range []string{"twitter.json", "citm_catalog.json", "canada.json"} {
		if b := sharedJSONOptional(name); b != nil {
			docs = append(docs, string(b))
		}
	}
	// At every asm level: the index stage, which converts, runs on each
	// level's kernel (and not at all on Generic).
	defer asm.SetLevel(asm.SetLevel(asm.Active()))
	for _, level := range asm.Levels() {
		asm.SetLevel(level)
		for _, d := range docs {
			checkEager(t, []byte(d))
		}
	}
}

// checkEager parses in with and without Options.Eager, on every pure-Go
// path (index, marks, word loops), and compares the documents.
func checkEager(t *testing.T, in []byte) {
	t.Helper()
	for _, lazy := range engineParsers(Options{}) {
		if lazy.Engine() != EnginePureGo {
			continue // Eager is the pure-Go engine's
		}
		eager := NewParser(Options{Engine: EnginePureGo, Eager: true})
		eager.doc.simdMin, eager.doc.marksMin = lazy.doc.simdMin, lazy.doc.marksMin
		eager.doc.noIndex, eager.doc.noMarks = lazy.doc.noIndex, lazy.doc.noMarks
		ld, lerr := lazy.Parse(in)
		ed, eerr := eager.Parse(in)
		if fmt.Sprint(lerr) != fmt.Sprint(eerr) {
			t.Fatalf("%.40q: errors differ: lazy %v, eager %v", in, lerr, eerr)
		}
		if lerr != nil {
			continue
		}
		if msg := diffValues(ld.Root(), ed.Root()); msg != "" {
			t.Fatalf("%.40q: %s", in, msg)
		}
	}
	// NDJSON takes the other path: conversion after the tape is built.
	lazy, eager := NewParser(Options{Engine: EnginePureGo}), NewParser(Options{Engine: EnginePureGo, Eager: true})
	nd := append(append(append([]byte(nil), in...), '\n'), in...)
	ld, lerr := lazy.ParseND(nd)
	ed, eerr := eager.ParseND(nd)
	if fmt.Sprint(lerr) != fmt.Sprint(eerr) {
		t.Fatalf("%.40q: NDJSON errors differ: lazy %v, eager %v", in, lerr, eerr)
	}
	if lerr != nil {
		return
	}
	li, ei := ld.Roots(), ed.Roots()
	for li.Next() {
		if !ei.Next() {
			t.Fatalf("%.40q: NDJSON root counts differ", in)
		}
		if msg := diffValues(li.Value(), ei.Value()); msg != "" {
			t.Fatalf("%.40q: NDJSON: %s", in, msg)
		}
	}
	if ei.Next() {
		t.Fatalf("%.40q: NDJSON root counts differ", in)
	}
}

// diffValues compares two values exactly and says where they differ.
func diffValues(a, b Value) string {
	if a.Kind() != b.Kind() {
		return fmt.Sprintf("kind %v vs %v", a.Kind(), b.Kind())
	}
	switch a.Kind() {
	case Number:
		ai, aerr := a.Int()
		bi, berr := b.Int()
		if ai != bi || aerr != berr {
			return fmt.Sprintf("Int %d %v vs %d %v", ai, aerr, bi, berr)
		}
		au, aerr := a.Uint()
		bu, berr := b.Uint()
		if au != bu || aerr != berr {
			return fmt.Sprintf("Uint %d %v vs %d %v", au, aerr, bu, berr)
		}
		af, aerr := a.Float()
		bf, berr := b.Float()
		if math.Float64bits(af) != math.Float64bits(bf) || aerr != berr {
			return fmt.Sprintf("Float %v %v vs %v %v", af, aerr, bf, berr)
		}
	case String:
		as, aerr := a.AppendString(nil)
		bs, berr := b.AppendString(nil)
		if !bytes.Equal(as, bs) || aerr != berr {
			return fmt.Sprintf("string %q vs %q", as, bs)
		}
	case Array:
		ai, _ := a.Array()
		bi, _ := b.Array()
		for ai.Next() {
			if !bi.Next() {
				return "array lengths differ"
			}
			if msg := diffValues(ai.Value(), bi.Value()); msg != "" {
				return msg
			}
		}
		if bi.Next() {
			return "array lengths differ"
		}
	case Object:
		ai, _ := a.Object()
		bi, _ := b.Object()
		for ai.Next() {
			if !bi.Next() {
				return "object sizes differ"
			}
			if msg := diffValues(ai.Key(), bi.Key()); msg != "" {
				return "key: " + msg
			}
			if msg := diffValues(ai.Value(), bi.Value()); msg != "" {
				return msg
			}
		}
		if bi.Next() {
			return "object sizes differ"
		}
	}
	return ""
}

// FuzzEager checks that Options.Eager never changes a verdict or a value.
func FuzzEager(f *testing.F) {
	addSeeds(f)
	for _, n := range eagerNumbers {
		f.Add([]byte(n))
	}
	f.Fuzz(func(t *testing.T, in []byte) { checkEager(t, in) })
}

// TestDigits8 checks the eight-digit word operations against a byte loop,
// at every digit in every lane and for bytes just outside '0'-'9'.
func TestDigits8(t *testing.T) {
	base := []byte("31415926")
	for lane := range 8 {
		for c := range 256 {
			w := bytes.Clone(base)
			w[lane] = byte(c)
			word := binary.LittleEndian.Uint64(w)
			isDigit := c >= '0' && c <= '9'
			if eightDigits(word) != isDigit {
				t.Fatalf("eightDigits(%q) = %v", w, !isDigit)
			}
			if !isDigit {
				continue
			}
			var want uint64
			for _, d := range w {
				want = want*10 + uint64(d-'0')
			}
			if got := digits8(word); got != want {
				t.Fatalf("digits8(%q) = %d, want %d", w, got, want)
			}
		}
	}
	for _, s := range []string{"00000000", "99999999", "10000000", "00000001", "12345678"} {
		var want uint64
		for _, d := range []byte(s) {
			want = want*10 + uint64(d-'0')
		}
		if got := digits8(binary.LittleEndian.Uint64([]byte(s))); got != want {
			t.Errorf("digits8(%q) = %d", s, got)
		}
	}
}

// TestConvertNumber checks convertNumber against strconv on the edge
// cases and on random number texts of every shape (1 to 25 digits, with
// and without a fraction and an exponent): Float bits as
// strconv.ParseFloat gives them, integers as strconv.ParseInt or
// ParseUint do, and text kept only where they would not agree.
func TestConvertNumber(t *testing.T) {
	texts := append([]string(nil), eagerNumbers...)
	rng := rand.New(rand.NewPCG(30, 2026))
	digits := func(n int) string {
		b := make([]byte, n)
		for k := range b {
			b[k] = byte('0' + rng.IntN(10))
		}
		if n > 1 && b[0] == '0' {
			b[0] = byte('1' + rng.IntN(9))
		}
		return string(b)
	}
	for range 200000 {
		s := digits(1 + rng.IntN(25))
		if rng.IntN(2) == 0 {
			s = "-" + s
		}
		if rng.IntN(2) == 0 {
			s += "." + digits(1+rng.IntN(20))
		}
		if rng.IntN(3) == 0 {
			s += []string{"e", "E+", "e-"}[rng.IntN(3)] + strconv.Itoa(rng.IntN(400))
		}
		texts = append(texts, s)
	}
	for _, s := range texts {
		tag, bits, ok := convertNumber([]byte(s))
		if !ok {
			continue
		}
		f, ferr := strconv.ParseFloat(s, 64)
		switch tag {
		case tagInt:
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil || n != int64(bits) || s == "-0" {
				t.Fatalf("%s: int %d, strconv %d %v", s, int64(bits), n, err)
			}
		case tagUint:
			n, err := strconv.ParseUint(s, 10, 64)
			if err != nil || n != bits || n <= math.MaxInt64 {
				t.Fatalf("%s: uint %d, strconv %d %v", s, bits, n, err)
			}
		case tagFloat:
			if ferr != nil || math.Float64bits(f) != bits {
				t.Fatalf("%s: float %v, strconv %v %v", s, math.Float64frombits(bits), f, ferr)
			}
			if !strings.ContainsAny(s, ".eE") {
				t.Fatalf("%s: an integer text gave a float", s)
			}
		default:
			t.Fatalf("%s: tag %q", s, tag)
		}
	}
}

// TestAppendUnescaped checks the unescaping (its word copy included)
// against encoding/json: strings of every length to 40 with an escape of
// each kind at every position, appended to buffers of several lengths and
// capacities, whose bytes before the append must stay as they were.
func TestAppendUnescaped(t *testing.T) {
	escapes := []string{`\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`, `\u00e9`, `\u20ac`, `\ud83d\ude00`, `\u0000`}
	for n := 0; n <= 40; n++ {
		for at := 0; at <= n; at++ {
			for _, e := range escapes {
				body := strings.Repeat("a", at) + e + strings.Repeat("é", (n-at)/2) + strings.Repeat("z", (n-at)%2)
				var want string
				if err := stdjson.Unmarshal([]byte(`"`+body+`"`), &want); err != nil {
					t.Fatal(err)
				}
				for _, dst := range [][]byte{nil, []byte("prefix"), make([]byte, 3, 100)} {
					before := string(dst)
					got := appendUnescaped(dst, []byte(body))
					if string(got[:len(before)]) != before || string(got[len(before):]) != want {
						t.Fatalf("%q onto %q: %q, want %q", body, before, got, before+want)
					}
				}
			}
		}
	}
}
