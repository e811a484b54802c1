package envelope

import "testing"

// FuzzEnvelope feeds arbitrary bytes to the envelope reader: it must return
// an error or an envelope whose every accessor works. It also builds an
// envelope from the fuzzed bytes and reads it back.
func FuzzEnvelope(f *testing.F) {
	eb := NewBuilder(0)
	f.Add(append([]byte{}, eb.Build(&Parts{Method: []byte("GET"), Target: []byte("/"), Headers: []Header{{Name: []byte("a"), Value: []byte("b")}}, URL: &URL{Host: []byte("h")}})...))
	f.Add(append([]byte{}, eb.Build(&Parts{})...))
	f.Add([]byte("\x0c\x00\x00\x00SEDG\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, in []byte) {
		if env, err := Read(in); err == nil {
			exerciseEnvelope(env)
		}
		n := len(in) / 3
		r := &Parts{Method: in[:n], Target: in[n : 2*n], Body: in[2*n:], Version: 11,
			Headers: []Header{{Name: in[:n/2], Value: in[n/2 : n]}}, URL: &URL{Path: in[n : 2*n]}}
		env, err := Read(eb.Build(r))
		if err != nil {
			t.Fatalf("own envelope rejected: %v", err)
		}
		checkRoundTrip(t, r, env)
	})
}
