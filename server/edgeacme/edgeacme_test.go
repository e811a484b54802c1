package edgeacme

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/zap"
)

func TestCheckStorage(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		storage string
		ok      bool
	}{
		{dir, true},
		{filepath.Join(dir, "new", "deeper"), true}, // creatable
		{file, false},                         // a file
		{filepath.Join(file, "under"), false}, // under a file
	} {
		err := Check(Options{Storage: tc.storage})
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrStorage)) {
			t.Errorf("%s: %v, want ok=%v", tc.storage, err, tc.ok)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "new")); !errors.Is(err, os.ErrNotExist) {
		t.Error("Check created the storage directory")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("Check left files behind: %v", entries)
	}
	if err := Check(Options{Storage: dir, CA: file}); !errors.Is(err, ErrCA) {
		t.Errorf("ca without PEM: %v", err)
	}
}

func TestNewErrors(t *testing.T) {
	if _, err := New(Options{}); !errors.Is(err, ErrNoDomains) {
		t.Errorf("no domains: %v", err)
	}
	for _, addr := range []string{"127.0.0.1", "127.0.0.1:x", "127.0.0.1:0"} {
		if _, err := New(Options{Domains: []string{"a.example"}, TLSALPNAddress: addr}); !errors.Is(err, ErrPort) {
			t.Errorf("%q: %v", addr, err)
		}
	}
}

// TestHTTPChallengeUnknown: only the challenge path is looked at, and a
// token no challenge is under way for is not answered (the redirect
// answers it instead).
func TestHTTPChallengeUnknown(t *testing.T) {
	m, err := New(Options{Domains: []string{"a.example"}, Storage: t.TempDir(),
		Directory: "https://127.0.0.1:1/dir", HTTPAddress: "127.0.0.1:80"})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Stop()
	for _, p := range []string{"/", "/.well-known/acme-challenge/unknowntoken", "/.well-known/acme-challenge/../x"} {
		if b, ok := m.HTTPChallenge([]byte("a.example"), []byte(p)); ok {
			t.Errorf("%s answered %q", p, b)
		}
	}
}

// FuzzHTTPChallenge: any Host and target reaching the redirect listener's
// challenge path go through certmagic without a panic, and nothing is
// answered while no challenge is under way.
func FuzzHTTPChallenge(f *testing.F) {
	m, err := New(Options{Domains: []string{"a.example"}, Storage: f.TempDir(),
		Directory: "https://127.0.0.1:1/dir", HTTPAddress: "127.0.0.1:80"})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(m.Stop)
	for _, seed := range [][2]string{
		{"a.example", "/.well-known/acme-challenge/tok"},
		{"[::1]", "/.well-known/acme-challenge/../../etc"},
		{"a.example:80", "/.well-known/acme-challenge/%2e%2e"},
		{"", "/.well-known/acme-challenge/"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, host, path string) {
		if b, ok := m.HTTPChallenge([]byte(host), []byte(path)); ok {
			t.Fatalf("answered %q with no challenge under way", b)
		}
	})
}

// TestLogToSlog: certmagic's zap lines reach the server's slog logger
// with their fields, at their level.
func TestLogToSlog(t *testing.T) {
	var buf bytes.Buffer
	zl := zapToSlog(slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo})))
	zl.Named("obtain").With(zap.String("identifier", "a.example")).Warn("will retry", zap.Int("attempt", 2))
	zl.Debug("not shown")
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatalf("%v: %q", err, buf.String())
	}
	if line["msg"] != "acme: obtain: will retry" || line["level"] != "WARN" || line["identifier"] != "a.example" || line["attempt"] != float64(2) {
		t.Errorf("line %v", line)
	}
}
