package http

import (
	"bytes"
	"strings"
	"testing"

	"github.com/simdedge/simdedge/asm"
)

// validTargetRef is validTarget's definition, one byte at a time.
func validTargetRef(t []byte) bool {
	for _, b := range t {
		if !isTargetByte(b) {
			return false
		}
	}
	return true
}

// TestValidTargetPaths checks validTarget at every asm level (vector scans
// above targetKernelMin, the word loop below) and the word loop itself
// against the per-byte definition: every length up to past one block and
// a spread beyond, every start alignment, and each byte value at the
// first, a middle and the last position.
func TestValidTargetPaths(t *testing.T) {
	buf := make([]byte, 200)
	var lengths []int
	for n := 0; n <= 72; n++ {
		lengths = append(lengths, n)
	}
	lengths = append(lengths, 95, 127, 128, 129, 150)
	for _, lvl := range asm.Levels() {
		prev := asm.SetLevel(lvl)
		for off := 0; off < 8; off++ {
			for _, n := range lengths {
				for i := range buf {
					buf[i] = 'a' + byte(i%26)
				}
				in := buf[off : off+n]
				check := func() {
					t.Helper()
					want := validTargetRef(in)
					if got := validTarget(in); got != want {
						t.Fatalf("%v: validTarget(%q) = %v, want %v", lvl, in, got, want)
					}
					if got := validTargetWords(in); got != want {
						t.Fatalf("validTargetWords(%q) = %v, want %v", in, got, want)
					}
				}
				check()
				if n == 0 {
					continue
				}
				for _, at := range []int{0, n / 2, n - 1} {
					for b := 0; b < 256; b++ {
						old := in[at]
						in[at] = byte(b)
						check()
						in[at] = old
					}
				}
				// "!" and '"' end the vector scan early: each byte value
				// after one must still be judged.
				for _, first := range []byte{'!', '"'} {
					in[0] = first
					for b := 0; b < 256; b++ {
						in[n-1] = byte(b)
						check()
					}
				}
			}
		}
		asm.SetLevel(prev)
	}
}

// validHostRef is ValidHost as RFC 3986 reads: an IP-literal, or a
// non-empty reg-name up to the last colon and digits after it.
func validHostRef(h []byte) bool {
	if len(h) == 0 {
		return false
	}
	if h[0] == '[' {
		return ValidHost(h) // the IP-literal branch is unchanged
	}
	host := h
	if i := bytes.LastIndexByte(h, ':'); i >= 0 {
		for _, c := range h[i+1:] {
			if c < '0' || c > '9' {
				return false
			}
		}
		host = h[:i]
	}
	if len(host) == 0 {
		return false
	}
	for _, b := range host {
		if !isRegNameByte(b) {
			return false
		}
	}
	return true
}

// TestValidHostPaths checks ValidHost's one-pass, four-bytes-a-step scan
// against validHostRef: every length up to 40, each byte value at each
// position of a reg-name, and with a port.
func TestValidHostPaths(t *testing.T) {
	for n := 1; n <= 40; n++ {
		for _, suffix := range []string{"", ":", ":80", ":8a", "::80"} {
			base := []byte(strings.Repeat("a", n) + suffix)
			for at := range n {
				for b := range 256 {
					h := bytes.Clone(base)
					h[at] = byte(b)
					if got, want := ValidHost(h), validHostRef(h); got != want {
						t.Fatalf("ValidHost(%q) = %v, want %v", h, got, want)
					}
				}
			}
		}
	}
}

// TestRequestLineTargetInline checks requestLine's inline target check
// (origin form, 24 bytes or more, bytes in '$'..'~') against
// CheckRequestLine, which always takes checkTarget: for methods of every
// length that matters (CONNECT's among them), targets on both sides of
// targetKernelMin, and each byte value that leaves the line whole at the
// first, a middle and the last position, at every asm level.
func TestRequestLineTargetInline(t *testing.T) {
	methods := []string{"GET", "PATCH", "OPTIONS", "CONNECT", "CONNECX"}
	bases := []string{
		"/" + strings.Repeat("abcdefgh", 3),          // 25 bytes: inline
		"/" + strings.Repeat("x", targetKernelMin-2), // 23 bytes: checkTarget
		"/" + strings.Repeat("abcdefgh/", 7),         // 64 bytes
		"http://example.com/" + strings.Repeat("y", 20),
		"example.com:443" + strings.Repeat("0", 10),
	}
	for _, lvl := range append([]asm.Level{asm.Generic}, asm.Levels()...) {
		prev := asm.SetLevel(lvl)
		for _, method := range methods {
			for _, base := range bases {
				target := []byte(base)
				for _, at := range []int{0, len(target) / 2, len(target) - 1} {
					for b := 0; b < 256; b++ {
						if isCtl(byte(b)) {
							continue // ends the line: another error
						}
						old := target[at]
						target[at] = byte(b)
						want := CheckRequestLine([]byte(method), target)
						in := method + " " + string(target) + " HTTP/1.1\r\nHost: a\r\n\r\n"
						var req Request
						_, got := ParseRequest([]byte(in), &req)
						if got != want {
							t.Errorf("%v: %s %q: ParseRequest: %v, CheckRequestLine: %v", lvl, method, target, got, want)
						}
						target[at] = old
					}
				}
			}
		}
		asm.SetLevel(prev)
	}
}
