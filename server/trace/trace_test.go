package trace

import (
	"strings"
	"testing"
)

func TestValidRequestID(t *testing.T) {
	good := []string{"a", "550e8400-e29b-41d4-a716-446655440000", "Root=1-5759e988-bd862e3fe1be46a994272793;Sampled=1"[:36], "abc_DEF.1:2/3+4=5@6", strings.Repeat("x", MaxRequestID)}
	for _, s := range good {
		if !ValidRequestID([]byte(s)) {
			t.Errorf("%q refused", s)
		}
	}
	bad := []string{"", strings.Repeat("x", MaxRequestID+1), "a b", "a\r\nb", "a\"b", "a,b", "a;b", "é", "a\x00", "<script>"}
	for _, s := range bad {
		if ValidRequestID([]byte(s)) {
			t.Errorf("%q accepted", s)
		}
	}
}

func TestIDGenUnique(t *testing.T) {
	seen := map[string]bool{}
	for c := 0; c < 50; c++ {
		var g IDGen
		g.Reset()
		for i := 0; i < 100; i++ {
			id := string(g.Append(nil))
			if seen[id] || !ValidRequestID([]byte(id)) {
				t.Fatalf("%q duplicate or invalid", id)
			}
			seen[id] = true
		}
	}
	var g IDGen
	buf := make([]byte, 0, 64)
	if n := testing.AllocsPerRun(1000, func() { buf = g.Append(buf[:0]) }); n != 0 {
		t.Errorf("%v allocs", n)
	}
}

const validTP = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

func TestParseTraceparent(t *testing.T) {
	p, ok := ParseTraceparent([]byte(validTP))
	if !ok || string(p.TraceID[:]) != "4bf92f3577b34da6a3ce929d0e0e4736" || string(p.Flags[:]) != "01" {
		t.Fatalf("%v %q %q", ok, p.TraceID, p.Flags)
	}
	// A future version may carry more fields after a '-' (§4.3).
	if _, ok := ParseTraceparent([]byte("cc" + validTP[2:] + "-what-the-future-will-be-like")); !ok {
		t.Error("higher version with more fields refused")
	}
	bad := []string{
		"", validTP[:54], validTP + "-", validTP + "0",
		"ff" + validTP[2:], // version ff is invalid
		"0g" + validTP[2:],
		"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",   // upper case
		"00-00000000000000000000000000000000-00f067aa0ba902b7-01",   // zero trace ID
		"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",   // zero parent ID
		"00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",   // separator
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0x",   // flags
		"cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01.x", // higher version, no '-'
	}
	for _, s := range bad {
		if _, ok := ParseTraceparent([]byte(s)); ok {
			t.Errorf("%q accepted", s)
		}
	}
}

func TestAppendTraceparent(t *testing.T) {
	p, _ := ParseTraceparent([]byte(validTP))
	out := AppendTraceparent(nil, &p)
	q, ok := ParseTraceparent(out)
	if !ok || q != p || string(out[36:52]) == validTP[36:52] || !strings.HasPrefix(string(out), validTP[:36]) {
		t.Fatalf("%s", out)
	}
	n := NewParent()
	if _, ok := ParseTraceparent(AppendTraceparent(nil, &n)); !ok {
		t.Fatal("a new trace does not parse")
	}
	buf := make([]byte, 0, 64)
	if a := testing.AllocsPerRun(1000, func() { buf = AppendTraceparent(buf[:0], &p) }); a != 0 {
		t.Errorf("%v allocs", a)
	}
}

// FuzzTraceparent: no panic; whatever parses, the edge's own header
// parses again with the same trace ID and flags and is 55 bytes.
func FuzzTraceparent(f *testing.F) {
	f.Add([]byte(validTP))
	f.Add([]byte("cc" + validTP[2:] + "-x"))
	f.Add([]byte("ff" + validTP[2:]))
	f.Fuzz(func(t *testing.T, v []byte) {
		p, ok := ParseTraceparent(v)
		if !ok {
			return
		}
		out := AppendTraceparent(nil, &p)
		q, ok := ParseTraceparent(out)
		if !ok || q != p || len(out) != TraceparentLen {
			t.Fatalf("%q -> %q", v, out)
		}
	})
}

// FuzzRequestID: a valid ID never holds a byte that could split a header
// or a log line.
func FuzzRequestID(f *testing.F) {
	f.Add([]byte("abc-1"))
	f.Add([]byte("a\r\nb"))
	f.Fuzz(func(t *testing.T, v []byte) {
		if ValidRequestID(v) && strings.ContainsAny(string(v), "\r\n\x00 \",;\\") {
			t.Fatalf("%q accepted", v)
		}
	})
}

func TestIDGenFixedWidth(t *testing.T) {
	var g IDGen
	n := len(g.Append(nil))
	for i := 0; i < 5000; i++ {
		if l := len(g.Append(nil)); l != n {
			t.Fatalf("ID %d is %d bytes, the first %d", i, l, n)
		}
	}
}
