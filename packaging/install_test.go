package packaging

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/simdedge/simdedge/internal/testenv"
)

// root is the repository root, where make runs.
func root(t *testing.T) string {
	t.Helper()
	r, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// run runs name args in dir with env added, and returns its combined
// output; it fails the test when the command fails.
func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	out, err := runErr(dir, env, name, args...)
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return out
}

func runErr(dir string, env []string, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

var (
	binOnce sync.Once
	binPath string
	binOut  string
	binErr  error
)

// simdedge builds the binary once with `make build` (the stamped static
// build that install, deb and the Dockerfile package) into a temporary
// directory, and returns its path.
func simdedge(t *testing.T) string {
	t.Helper()
	mk := testenv.Command(t, "make")
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "simdedge-pkg-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "simdedge")
		binOut, binErr = runErr(root(t), nil, mk, "-s", "build", "BUILD_OUT="+binPath)
	})
	if binErr != nil {
		t.Fatalf("make build: %v\n%s", binErr, binOut)
	}
	return binPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// TestInstall: `make install` into a temporary DESTDIR puts the stamped
// binary, the man page, the units (pointed at BINDIR) and the default
// configuration in place; a second install keeps a configuration the
// administrator changed; uninstall removes everything but it.
func TestInstall(t *testing.T) {
	mk := testenv.Command(t, "make")
	bin := simdedge(t)
	dest := t.TempDir()
	install := func() string {
		return run(t, root(t), nil, mk, "-s", "install", "DESTDIR="+dest, "PREFIX=/opt/simdedge", "BUILD_OUT="+bin)
	}
	install()

	installed := filepath.Join(dest, "opt/simdedge/bin/simdedge")
	if fi, err := os.Stat(installed); err != nil || fi.Mode().Perm() != 0o755 {
		t.Fatalf("binary: %v, %v; want mode 0755", fi, err)
	}
	version := run(t, "", nil, installed, "version")
	if git, err := exec.LookPath("git"); err == nil {
		head := strings.TrimSpace(run(t, root(t), nil, git, "rev-parse", "--short", "HEAD"))
		if !strings.Contains(version, head) {
			t.Errorf("version %q does not name HEAD %s: the binary is not stamped", version, head)
		}
	}

	man := readFile(t, filepath.Join(dest, "opt/simdedge/share/man/man1/simdedge.1"))
	for _, want := range []string{".TH SIMDEDGE 1", ".SH SYNOPSIS", "simdedge serve", ".SS serve", ".SH SIGNALS"} {
		if !strings.Contains(man, want) {
			t.Errorf("man page lacks %q:\n%s", want, man)
		}
	}

	unit := readFile(t, filepath.Join(dest, "opt/simdedge/lib/systemd/system/simdedge.service"))
	if !strings.Contains(unit, "\nExecStart=/opt/simdedge/bin/simdedge serve -config /etc/simdedge/simdedge.yaml -pidfile /run/simdedge/simdedge.pid\n") {
		t.Errorf("installed unit does not run the installed binary:\n%s", unit)
	}
	readFile(t, filepath.Join(dest, "opt/simdedge/lib/systemd/system/simdedge.socket"))

	conf := filepath.Join(dest, "etc/simdedge/simdedge.yaml")
	if got, want := readFile(t, conf), readFile(t, filepath.Join(root(t), "packaging/simdedge.yaml")); got != want {
		t.Errorf("installed configuration differs from packaging/simdedge.yaml")
	}
	if out, err := runErr("", nil, installed, "check", conf); err != nil {
		t.Errorf("simdedge check of the installed configuration: %v\n%s", err, out)
	}

	// The administrator's configuration survives a reinstall.
	mine := "# mine\nlisten: \"127.0.0.1:8081\"\n"
	if err := os.WriteFile(conf, []byte(mine), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := install(); !strings.Contains(out, "keeping the existing") {
		t.Errorf("second install did not say it kept the configuration: %s", out)
	}
	if got := readFile(t, conf); got != mine {
		t.Errorf("second install replaced the configuration: %q", got)
	}

	run(t, root(t), nil, mk, "-s", "uninstall", "DESTDIR="+dest, "PREFIX=/opt/simdedge")
	if _, err := os.Stat(installed); !os.IsNotExist(err) {
		t.Errorf("uninstall left the binary: %v", err)
	}
	if got := readFile(t, conf); got != mine {
		t.Errorf("uninstall touched the configuration")
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
