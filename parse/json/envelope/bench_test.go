package envelope

import "testing"

// BenchmarkEnvelope builds, verifies and reads the envelope of the 703-byte
// request (the figure: ns and allocations per round trip). It lives
// here rather than in bench/micro because it has no peer to stand beside.
func BenchmarkEnvelope(b *testing.B) {
	r := kittyParts(b)
	eb := NewBuilder(0)
	b.Run("build", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			eb.Build(r)
		}
	})
	buf := append([]byte{}, eb.Build(r)...)
	b.Run("verify", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Read(buf); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("build_verify_read", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			v, err := Read(eb.Build(r))
			if err != nil {
				b.Fatal(err)
			}
			exerciseEnvelope(v)
		}
	})
}
