package envelope

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// kittyParts splits the 703-byte test request into Parts with a
// plain line split (this package must not depend on parse/http's progress).
func kittyParts(tb testing.TB) *Parts {
	tb.Helper()
	raw, err := os.ReadFile(sharedDataPath("http", "req_kittyhell_703B.txt"))
	if err != nil {
		tb.Skipf("request corpus not available: %v", err)
	}
	return splitRequest(tb, raw)
}

func splitRequest(tb testing.TB, raw []byte) *Parts {
	head, body, _ := bytes.Cut(raw, []byte("\r\n\r\n"))
	lines := bytes.Split(head, []byte("\r\n"))
	rl := bytes.SplitN(lines[0], []byte(" "), 3)
	if len(rl) != 3 {
		tb.Fatalf("bad request line")
	}
	r := &Parts{Method: rl[0], Target: rl[1], Version: 11, Body: body}
	for _, l := range lines[1:] {
		name, value, ok := bytes.Cut(l, []byte(":"))
		if !ok {
			tb.Fatalf("bad header line")
		}
		r.Headers = append(r.Headers, Header{Name: name, Value: bytes.TrimSpace(value)})
	}
	r.URL = &URL{Scheme: []byte("http"), Host: []byte("www.kittyhell.com"), Path: rl[1], Query: []byte{}}
	return r
}

func checkRoundTrip(t *testing.T, r *Parts, env View) {
	t.Helper()
	if !bytes.Equal(env.Method(), r.Method) || !bytes.Equal(env.Target(), r.Target) ||
		env.Version() != r.Version || !bytes.Equal(env.Body(), r.Body) {
		t.Fatalf("request line or body differ")
	}
	if env.NumHeaders() != len(r.Headers) {
		t.Fatalf("headers: %d, want %d", env.NumHeaders(), len(r.Headers))
	}
	for i, h := range r.Headers {
		n, v := env.Header(i)
		if !bytes.Equal(n, h.Name) || !bytes.Equal(v, h.Value) {
			t.Fatalf("header %d differs", i)
		}
	}
	if n, v := env.Header(len(r.Headers)); n != nil || v != nil {
		t.Fatalf("header out of range returned data")
	}
	u, ok := env.URL()
	if ok != (r.URL != nil) {
		t.Fatalf("URL presence %v", ok)
	}
	if ok {
		want := *r.URL
		pairs := [][2][]byte{{u.Href, want.Href}, {u.Scheme, want.Scheme}, {u.Username, want.Username},
			{u.Password, want.Password}, {u.Host, want.Host}, {u.Port, want.Port}, {u.Path, want.Path},
			{u.Query, want.Query}, {u.Fragment, want.Fragment}}
		for i, p := range pairs {
			if !bytes.Equal(p[0], p[1]) || (p[0] == nil) != (p[1] == nil) {
				t.Fatalf("URL field %d: %q, want %q", i, p[0], p[1])
			}
		}
	}
}

func TestEnvelopeRoundTrip(t *testing.T) {
	cases := map[string]*Parts{
		"kitty": kittyParts(t),
		"empty": {},
		"post":  {Method: []byte("POST"), Target: []byte("/x?a=1"), Version: 10, Body: []byte(`{"a":1}`), Headers: []Header{{Name: []byte("Content-Type"), Value: []byte("application/json")}, {Name: []byte("X-Empty"), Value: []byte{}}}},
		"url":   {Method: []byte("GET"), URL: &URL{Href: []byte("https://u:p@h:8443/p?q#f"), Scheme: []byte("https"), Username: []byte("u"), Password: []byte("p"), Host: []byte("h"), Port: []byte("8443"), Path: []byte("/p"), Query: []byte("q"), Fragment: []byte("f")}},
	}
	for _, size := range []int{0, 1, 1001} {
		eb := NewBuilder(size)
		for name, r := range cases {
			buf := eb.Build(r)
			env, err := Read(buf)
			if err != nil {
				t.Fatalf("%s (size %d): %v", name, size, err)
			}
			checkRoundTrip(t, r, env)
			// A copy at an odd address still verifies: alignment is
			// relative to the buffer start, as in the FlatBuffers verifier.
			cp := append([]byte{}, buf...)
			if _, err := Read(cp); err != nil {
				t.Fatalf("%s copy: %v", name, err)
			}
		}
	}
}

// exerciseEnvelope runs every accessor; used on buffers that verified.
func exerciseEnvelope(env View) int {
	n := len(env.Method()) + len(env.Target()) + len(env.Body()) + int(env.Version())
	for i := -1; i <= env.NumHeaders(); i++ {
		a, b := env.Header(i)
		n += len(a) + len(b)
	}
	if u, ok := env.URL(); ok {
		n += len(u.Href) + len(u.Scheme) + len(u.Username) + len(u.Password) + len(u.Host) +
			len(u.Port) + len(u.Path) + len(u.Query) + len(u.Fragment)
	}
	return n
}

// TestEnvelopeMalformed truncates and corrupts a valid envelope at every
// byte: the reader must return an error or a verified envelope whose
// accessors all work, never panic.
func TestEnvelopeMalformed(t *testing.T) {
	r := kittyParts(t)
	good := append([]byte{}, NewBuilder(0).Build(r)...)
	for n := 0; n < len(good); n++ {
		if _, err := Read(good[:n]); err == nil {
			// Only cutting nothing the root refers to could pass, and the
			// body vector ends the buffer's referenced data, so any cut
			// before the end must fail.
			t.Fatalf("truncated to %d bytes: accepted", n)
		}
	}
	bad := make([]byte, len(good))
	for i := range good {
		for _, x := range []byte{0x01, 0x80, 0xff} {
			copy(bad, good)
			bad[i] ^= x
			env, err := Read(bad)
			if err == nil {
				exerciseEnvelope(env)
				continue
			}
			var ee *Error
			if !errors.As(err, &ee) {
				t.Fatalf("error type %T", err)
			}
		}
	}
	for _, b := range [][]byte{nil, []byte("SEDG"), []byte("\x08\x00\x00\x00SEDG"), []byte("\x08\x00\x00\x00XXXX\x00\x00\x00\x00")} {
		if _, err := Read(b); err == nil {
			t.Errorf("%q accepted", b)
		}
	}
}

func TestEnvelopeAllocs(t *testing.T) {
	r := kittyParts(t)
	eb := NewBuilder(0)
	eb.Build(r)
	allocs := testing.AllocsPerRun(100, func() {
		buf := eb.Build(r)
		env, err := Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		exerciseEnvelope(env)
	})
	if allocs != 0 {
		t.Errorf("build+verify+read allocates %v times", allocs)
	}
}

// sharedDataPath locates ../shared/data beside the repository (or
// $SIMDEDGE_DATA).
func sharedDataPath(elem ...string) string {
	dir := os.Getenv("SIMDEDGE_DATA")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "..", "shared", "data")
	}
	return filepath.Join(append([]string{dir}, elem...)...)
}
