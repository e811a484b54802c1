package h3test

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Ngtcp2Routes is the configuration's upstreams and routes that
// Ngtcp2Suite drives: a proxy route under /p/ to the upstream "back", echo
// at /echo, files under /www/ and respond for the rest. The two %q verbs
// take the backend's host:port and the files' root (Ngtcp2Fixture's).
const Ngtcp2Routes = `limits:
  max_body_bytes: 4194304
upstreams:
  - name: back
    targets: [%q]
routes:
  - match: {path_prefix: /p/}
    proxy: {upstream: back}
  - match: {path: /echo}
    echo: {}
  - match: {path_prefix: /www/}
    files: {root: %q}
  - match: {path_prefix: /}
    respond: {status: 200, body: hi}
`

// Ngtcp2Fixture is what the suite serves and sends: a backend that echoes
// POST bodies and answers "proxied " and its Via otherwise, and a 1 MiB
// random file, both under www/ in Dir (served) and as Dir/up.bin (sent).
type Ngtcp2Fixture struct {
	Back string // the backend's host:port
	Dir  string
	big  []byte
}

// NewNgtcp2Fixture starts the backend (closed at cleanup) and writes the
// files.
func NewNgtcp2Fixture(t testing.TB) *Ngtcp2Fixture {
	t.Helper()
	back := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.Method == "POST" {
			w.Write(b) // the body back, whole
			return
		}
		io.WriteString(w, "proxied "+r.Header.Get("Via"))
	}))
	t.Cleanup(back.Close)
	f := &Ngtcp2Fixture{Back: strings.TrimPrefix(back.URL, "http://"), Dir: t.TempDir(), big: make([]byte, 1<<20)}
	rand.Read(f.big)
	if err := os.MkdirAll(filepath.Join(f.Dir, "www"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(f.Dir, "www", "big.bin"), filepath.Join(f.Dir, "up.bin")} {
		if err := os.WriteFile(p, f.big, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// Routes is Ngtcp2Routes filled in with this fixture's backend and root.
func (f *Ngtcp2Fixture) Routes() string { return fmt.Sprintf(Ngtcp2Routes, f.Back, f.Dir) }

// Run drives ngtcp2's client bin (behind prefix, as RunNgtcp2) against
// addr, with base the URLs' scheme and authority: respond and proxy, 1 MiB
// up to echo and through the proxy both ways, 1 MiB down from files, and
// 100 requests at once on one connection.
func (f *Ngtcp2Fixture) Run(t testing.TB, prefix []string, bin, addr, base string) {
	t.Helper()
	dl := filepath.Join(f.Dir, "dl")
	os.Mkdir(dl, 0o755)
	out := RunNgtcp2(t, prefix, bin, addr, []string{"--download=" + dl}, base+"/r", base+"/p/x")
	st := Ngtcp2Status.FindAllStringSubmatch(out, -1)
	r, _ := os.ReadFile(filepath.Join(dl, "r"))
	x, _ := os.ReadFile(filepath.Join(dl, "x"))
	if len(st) != 2 || st[0][1] != "200" || st[1][1] != "200" || string(r) != "hi" || string(x) != "proxied 3 simdedge" {
		t.Fatalf("respond and proxy: %v %q %q\n%s", st, r, x, Tail(out, 3000))
	}
	up := filepath.Join(f.Dir, "up.bin")
	// 1 MiB up: echo counts it; the proxy sends it back whole.
	RunNgtcp2(t, prefix, bin, addr, []string{"-q", "-m", "POST", "-d", up, "--download=" + dl}, base+"/echo")
	if b, _ := os.ReadFile(filepath.Join(dl, "echo")); !bytes.Contains(b, []byte(`"body_len":1048576`)) || !bytes.Contains(b, []byte(`"version":"HTTP/3"`)) {
		t.Fatalf("1 MiB to echo: %s", b)
	}
	RunNgtcp2(t, prefix, bin, addr, []string{"-q", "-m", "POST", "-d", up, "--download=" + dl}, base+"/p/back.bin")
	if got, _ := os.ReadFile(filepath.Join(dl, "back.bin")); !bytes.Equal(got, f.big) {
		t.Fatalf("1 MiB through the proxy both ways: %d bytes back", len(got))
	}
	// 1 MiB down from files.
	RunNgtcp2(t, prefix, bin, addr, []string{"-q", "--download=" + dl}, base+"/www/big.bin")
	if got, _ := os.ReadFile(filepath.Join(dl, "big.bin")); !bytes.Equal(got, f.big) {
		t.Fatalf("1 MiB file: %d bytes", len(got))
	}
	// 100 requests at once on one connection.
	out = RunNgtcp2(t, prefix, bin, addr, []string{"-n", "100"}, base+"/")
	if st := Ngtcp2Status.FindAllStringSubmatch(out, -1); len(st) != 100 {
		t.Fatalf("%d answers of 100\n%s", len(st), Tail(out, 3000))
	}
}
