//go:build simdedgedebug

package server

// PoisonByte fills buffers the server has released, in builds with the
// simdedgedebug tag: a view kept past its handler then reads 0xDB bytes
// instead of another request's, and tests that check for it fail loudly.
const PoisonByte = 0xDB

// Poisoning reports whether released buffers are poisoned (simdedgedebug).
const Poisoning = true

func poison(b []byte) {
	for i := range b {
		b[i] = PoisonByte
	}
}
