package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testcert"
	"github.com/simdedge/simdedge/rdma"
	"github.com/simdedge/simdedge/server/config"
)

// exampleRoots are the absolute directories the examples may name; the
// test moves them under a temporary directory, where it creates the
// certificates, keys and document roots the examples expect.
var exampleRoots = []string{"/etc/simdedge/", "/var/lib/simdedge/", "/var/log/simdedge/", "/srv/"}

// wantExamples are the deployments examples/ must cover (issue 29).
var wantExamples = []string{
	"reverse-proxy.yaml", "https-edge.yaml", "api-gateway.yaml", "grpc-proxy.yaml",
	"static-site.yaml", "virtual-hosts.yaml", "xdp-datagram.yaml", "rdma-backends.yaml",
}

// TestExamples runs `simdedge check` on every file of examples/, as an
// operator who copies one would, after moving the paths it names into a
// sandbox and creating the files there. A file with rdma:// targets
// needs a binary built with -tags rdma (make test-rdma runs this test so);
// without it the check must fail for that reason alone.
func TestExamples(t *testing.T) {
	files, err := filepath.Glob("../../examples/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, f := range files {
		have[filepath.Base(f)] = true
	}
	for _, w := range wantExamples {
		if !have[w] {
			t.Errorf("examples/%s is missing", w)
		}
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			file := sandboxExample(t, f)
			var out, errb bytes.Buffer
			code := run([]string{"check", "-config", file}, &out, &errb)
			src, _ := os.ReadFile(f)
			if bytes.Contains(src, []byte("rdma://")) && !rdma.Supported() {
				if code == 0 || !onlyNoRDMA(errb.String()) {
					t.Fatalf("check = %d, want only the no-RDMA error:\n%s", code, errb.String())
				}
				t.Log("built without RDMA support: checked that this is the only error (make test-rdma checks the file fully)")
				return
			}
			if code != 0 {
				t.Fatalf("simdedge check %s = %d:\n%s", filepath.Base(f), code, errb.String())
			}
			if strings.Contains(errb.String(), "warning") {
				t.Errorf("simdedge check warns:\n%s", errb.String())
			}
		})
	}
}

// onlyNoRDMA reports whether every error line of check's output is
// errNoRDMA (a verdict line "simdedge check: ..." aside).
func onlyNoRDMA(stderr string) bool {
	n := 0
	for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if strings.HasPrefix(l, "simdedge check:") {
			continue
		}
		if !strings.Contains(l, errNoRDMA.Error()) {
			return false
		}
		n++
	}
	return n > 0
}

// sandboxExample copies example f into a temporary directory with its
// absolute paths moved there, creates what it refers to (relative paths:
// under that directory, for a caller that runs check from it), and
// returns the copy's path.
func sandboxExample(t *testing.T, f string) string {
	t.Helper()
	src, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	text := string(src)
	for _, r := range exampleRoots {
		text = strings.ReplaceAll(text, r, dir+r)
	}
	file := filepath.Join(dir, filepath.Base(f))
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse([]byte(text))
	if err != nil {
		t.Fatalf("%s: %v", f, err)
	}
	ca := testcert.NewCA(t, "examples CA")
	place := func(path, from string) {
		t.Helper()
		if !filepath.IsAbs(path) {
			// A relative path (the README's tour) is relative to the
			// working directory, which the caller makes dir.
			path = filepath.Join(dir, path)
		}
		if !strings.HasPrefix(path, dir) {
			t.Fatalf("%s names %s, outside %v: add its directory to exampleRoots", f, path, exampleRoots)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if from == "" {
			return
		}
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	pair := func(certFile, keyFile string, p *testcert.Pair) {
		place(certFile, p.CertFile)
		place(keyFile, p.KeyFile)
	}
	for _, l := range cfg.Listeners {
		if l.TLS == nil {
			continue
		}
		for i, c := range l.TLS.Certificates {
			name := strings.TrimSuffix(filepath.Base(c.Cert), ".pem")
			pair(c.Cert, c.Key, ca.Leaf(t, "leaf"+string(rune('a'+i)), []string{strings.Replace(name, "wildcard.", "*.", 1)}, time.Time{}, time.Time{}))
		}
		if a := l.TLS.ClientAuth; a != nil {
			place(a.CA, ca.File)
		}
		if a := l.TLS.ACME; a != nil {
			place(filepath.Join(a.Storage, "x"), "")
			if a.CA != "" {
				place(a.CA, ca.File)
			}
		}
	}
	for _, u := range cfg.Upstreams {
		if u.TLS == nil {
			continue
		}
		if u.TLS.CA != "" {
			place(u.TLS.CA, ca.File)
		}
		if c := u.TLS.ClientCert; c != nil {
			pair(c.Cert, c.Key, ca.Client(t, "client-"+u.Name, "edge"))
		}
	}
	for _, r := range cfg.Routes {
		if r.Files != nil {
			place(filepath.Join(r.Files.Root, "index.html"), "")
		}
	}
	if a := cfg.AccessLog; a != nil && filepath.IsAbs(a.Path) {
		place(a.Path, "")
	}
	return file
}
