package packaging

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/server/config"
)

// maxExposure bounds `systemd-analyze security`'s exposure score of the
// service (0 is the most locked down, 10 the least; the unit scores 1.7
// with systemd 252): a change that drops hardening fails here.
const maxExposure = 2.5

// unitWait bounds starting and stopping the server in TestUnitCommands.
const unitWait = 30 * time.Second

// TestSystemdUnits: systemd-analyze verify accepts both units with no
// warning (and does warn about a broken copy, which shows the check can
// fail), the service's exposure stays under maxExposure, it keeps the
// hardening the README promises, and the socket unit listens where the
// default configuration does.
func TestSystemdUnits(t *testing.T) {
	analyze := testenv.Command(t, "systemd-analyze")
	bin := simdedge(t)
	dir := t.TempDir()
	// verify checks that ExecStart's binary exists: point it at the
	// one just built.
	svc := strings.ReplaceAll(readFile(t, filepath.Join(root(t), "packaging/systemd/simdedge.service")), "/usr/bin/simdedge", bin)
	sock := readFile(t, filepath.Join(root(t), "packaging/systemd/simdedge.socket"))
	write(t, filepath.Join(dir, "simdedge.service"), svc)
	write(t, filepath.Join(dir, "simdedge.socket"), sock)

	// --man=no: the man page is installed with the package, not here.
	if out, _ := runErr(dir, nil, analyze, "verify", "--man=no", "./simdedge.service", "./simdedge.socket"); out != "" {
		t.Errorf("systemd-analyze verify warns:\n%s", out)
	}
	broken := filepath.Join(t.TempDir(), "simdedge.service")
	write(t, broken, strings.Replace(svc, "ProtectSystem=strict", "ProtectSystem=very", 1))
	if out, _ := runErr(filepath.Dir(broken), nil, analyze, "verify", "--man=no", "./simdedge.service"); !strings.Contains(out, "protect system") {
		t.Errorf("systemd-analyze verify did not flag a bad ProtectSystem value: %q", out)
	}

	out, err := runErr(dir, nil, analyze, "security", "--offline=yes", "--no-pager", "./simdedge.service")
	m := regexp.MustCompile(`Overall exposure level for simdedge\.service: ([0-9.]+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("systemd-analyze security gave no exposure level (%v):\n%s", err, out)
	}
	if score, _ := strconv.ParseFloat(m[1], 64); score > maxExposure {
		t.Errorf("exposure %.1f, want at most %.1f:\n%s", score, maxExposure, out)
	}

	for _, want := range []string{
		"DynamicUser=yes", "NoNewPrivileges=yes", "ProtectSystem=strict", "ProtectHome=yes", "PrivateTmp=yes",
		"CapabilityBoundingSet=CAP_NET_BIND_SERVICE", "AmbientCapabilities=CAP_NET_BIND_SERVICE",
		"ExecReload=", "KillSignal=SIGTERM", "StateDirectory=simdedge",
	} {
		if !strings.Contains(svc, "\n"+want) {
			t.Errorf("simdedge.service lacks %s", want)
		}
	}

	// The socket unit and the default configuration agree on the port,
	// or simdedge would bind its own socket beside systemd's.
	cfg, err := config.Load(filepath.Join(root(t), "packaging/simdedge.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	_, port, err := net.SplitHostPort(cfg.Listen)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sock, "\nListenStream="+port+"\n") {
		t.Errorf("simdedge.socket does not listen on the default configuration's port %s", port)
	}
}

func write(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestUnitCommands runs the service's ExecStart and ExecReload lines as
// systemd would (paths moved into a temporary directory): the server
// starts, `systemctl reload` of a valid file succeeds and of a broken one
// fails, and SIGTERM stops it.
func TestUnitCommands(t *testing.T) {
	bin := simdedge(t)
	dir := t.TempDir()
	conf := filepath.Join(dir, "simdedge.yaml")
	good := "listen: \"127.0.0.1:0\"\nroutes:\n  - match: {path_prefix: /}\n    respond: {status: 200, body: \"ok\\n\"}\n"
	write(t, conf, good)
	svc := readFile(t, filepath.Join(root(t), "packaging/systemd/simdedge.service"))
	line := func(key string) []string {
		for _, l := range strings.Split(svc, "\n") {
			if v, ok := strings.CutPrefix(l, key+"="); ok {
				v = strings.ReplaceAll(v, "/usr/bin/simdedge", bin)
				v = strings.ReplaceAll(v, "/etc/simdedge/simdedge.yaml", conf)
				v = strings.ReplaceAll(v, "/run/simdedge/", dir+"/")
				return strings.Fields(v)
			}
		}
		t.Fatalf("simdedge.service has no %s", key)
		return nil
	}
	start, reload := line("ExecStart"), line("ExecReload")
	cmd := exec.Command(start[0], start[1:]...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM) // by PID: the process this test started
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("ExecStart's server after SIGTERM: %v", err)
			}
		case <-time.After(unitWait):
			cmd.Process.Kill()
			<-done
			t.Errorf("ExecStart's server did not stop on SIGTERM")
		}
	}()
	pidfile := filepath.Join(dir, "simdedge.pid")
	for deadline := time.Now().Add(unitWait); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(pidfile); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pidfile %s after %v", pidfile, unitWait)
		}
	}
	if out, err := runErr("", nil, reload[0], reload[1:]...); err != nil {
		t.Errorf("ExecReload of a valid file: %v\n%s", err, out)
	}
	write(t, conf, good+"bogus_key: 1\n")
	if out, err := runErr("", nil, reload[0], reload[1:]...); err == nil {
		t.Errorf("ExecReload of a broken file succeeded: %s", out)
	}
}
