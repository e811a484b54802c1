package pathnorm

import "testing"

// BenchmarkTarget is the normaliser's own cost: a plain target (the fast
// check, no write) and dirty ones (decode, merge, dot segments), with
// dst kept across calls as a connection keeps it.
func BenchmarkTarget(b *testing.B) {
	for _, c := range []struct{ name, t string }{
		{"plain", "/api/v1/users/12345/profile?fields=name,email"},
		{"dotdot", "/api/v1/../v1/users/12345/./profile?fields=name,email"},
		{"slashes", "//api//v1/users//12345/profile?fields=name,email"},
		{"escapes", "/api/v1/%75sers/12345/pro%66ile%3a?fields=name,email"},
	} {
		b.Run(c.name, func(b *testing.B) {
			t := []byte(c.t)
			dst := make([]byte, 0, len(t))
			o := &Options{}
			b.SetBytes(int64(len(t)))
			b.ReportAllocs()
			for b.Loop() {
				dst, _, _ = Target(dst, t, o)
			}
		})
	}
}
