package packaging

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simdedge/simdedge/internal/testenv"
)

// Variables of the .deb test. .ci/run sets both: CI has the module proxy
// (nfpm) and is a throwaway machine on which a real install is harmless.
const (
	// requireDeb makes a missing nfpm or dpkg a failure instead of a skip.
	requireDeb = "REQUIRE_DEB"
	// allowDpkgInstall lets the test install the package into this
	// machine's own root (dpkg -i) and remove it again.
	allowDpkgInstall = "ALLOW_DPKG_INSTALL"
)

// debFiles are paths the package must install.
var debFiles = []string{
	"./usr/bin/simdedge",
	"./usr/share/man/man1/simdedge.1.gz",
	"./etc/simdedge/simdedge.yaml",
	"./etc/logrotate.d/simdedge",
	"./lib/systemd/system/simdedge.service",
	"./lib/systemd/system/simdedge.socket",
	"./usr/share/doc/simdedge/README.md",
}

// TestDeb builds the .deb with `make deb` (nfpm), checks its control data,
// files and conffiles, installs it with dpkg into a temporary root (and,
// with ALLOW_DPKG_INSTALL=1, into this machine's), runs the installed
// binary, and removes and purges it.
func TestDeb(t *testing.T) {
	if testing.Short() {
		t.Skip("short: builds nfpm")
	}
	mk := testenv.Command(t, "make")
	dpkg, err := exec.LookPath("dpkg")
	testenv.Need(t, requireDeb, err == nil, "dpkg not found (Debian's dpkg installs and inspects the package)")
	bin := simdedge(t)
	out := t.TempDir()
	// nfpm comes through the module proxy: where it cannot, skip.
	if log, err := runErr(root(t), nil, mk, "-s", "deb", "BUILD_OUT="+bin, "DEB_OUT="+out); err != nil {
		testenv.Need(t, requireDeb, false, "make deb failed (nfpm from the module proxy?): "+err.Error()+"\n"+log)
	}
	debs, _ := filepath.Glob(filepath.Join(out, "simdedge_*.deb"))
	if len(debs) != 1 {
		t.Fatalf("make deb made %v, want one simdedge_*.deb", debs)
	}
	deb := debs[0]

	for field, want := range map[string]string{"Package": "simdedge", "Architecture": goarch(t), "Section": "httpd"} {
		if got := strings.TrimSpace(run(t, "", nil, "dpkg-deb", "-f", deb, field)); got != want {
			t.Errorf("%s: %q, want %q", field, got, want)
		}
	}
	contents := run(t, "", nil, "dpkg-deb", "-c", deb)
	for _, f := range debFiles {
		if !strings.Contains(contents, " "+f+"\n") {
			t.Errorf("package lacks %s:\n%s", f, contents)
		}
	}
	// The configuration is a conffile: dpkg keeps the administrator's
	// changes on upgrade.
	if conf := run(t, "", nil, "dpkg-deb", "-I", deb, "conffiles"); !strings.Contains(conf, "/etc/simdedge/simdedge.yaml") {
		t.Errorf("conffiles: %q, want /etc/simdedge/simdedge.yaml", conf)
	}

	t.Run("root", func(t *testing.T) { testDpkgRoot(t, dpkg, deb) })
	t.Run("host", func(t *testing.T) { testDpkgHost(t, dpkg, deb) })
}

func goarch(t *testing.T) string {
	t.Helper()
	return strings.TrimSpace(run(t, "", nil, "go", "env", "GOARCH"))
}

// testDpkgRoot installs into a temporary root (dpkg --root; the scripts run
// outside it with DPKG_ROOT set, and do nothing then).
func testDpkgRoot(t *testing.T, dpkg, deb string) {
	r := t.TempDir()
	for _, d := range []string{"var/lib/dpkg/info", "var/lib/dpkg/updates", "var/lib/dpkg/triggers"} {
		if err := os.MkdirAll(filepath.Join(r, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(r, "var/lib/dpkg/status"), "")
	args := []string{"--root=" + r, "--force-script-chrootless", "--force-not-root", "--log=/dev/null"}
	run(t, "", nil, dpkg, append(args, "-i", deb)...)
	if v := run(t, "", nil, filepath.Join(r, "usr/bin/simdedge"), "version"); !strings.HasPrefix(v, "simdedge ") {
		t.Errorf("installed simdedge version: %q", v)
	}
	if st := run(t, "", nil, "dpkg-query", "--root="+r, "-W", "-f=${Status}", "simdedge"); st != "install ok installed" {
		t.Errorf("dpkg status %q", st)
	}
	run(t, "", nil, dpkg, append(args, "-r", "simdedge")...)
	if _, err := os.Stat(filepath.Join(r, "usr/bin/simdedge")); !os.IsNotExist(err) {
		t.Errorf("dpkg -r left the binary: %v", err)
	}
	if _, err := os.Stat(filepath.Join(r, "etc/simdedge/simdedge.yaml")); err != nil {
		t.Errorf("dpkg -r removed the conffile (only --purge should): %v", err)
	}
	run(t, "", nil, dpkg, append(args, "--purge", "simdedge")...)
	if _, err := os.Stat(filepath.Join(r, "etc/simdedge/simdedge.yaml")); !os.IsNotExist(err) {
		t.Errorf("dpkg --purge left the conffile: %v", err)
	}
}

// testDpkgHost installs into this machine's root, only where
// ALLOW_DPKG_INSTALL allows it and no simdedge package is installed.
func testDpkgHost(t *testing.T, dpkg, deb string) {
	if !testenv.Required(allowDpkgInstall) {
		t.Skip("skipped: set ALLOW_DPKG_INSTALL=1 to install the package on this machine (dpkg -i, then dpkg --purge)")
	}
	testenv.NeedRoot(t)
	if st, err := runErr("", nil, "dpkg-query", "-W", "-f=${db:Status-Status}", "simdedge"); err == nil && st == "installed" {
		t.Fatal("a simdedge package is installed here: the test does not replace it")
	}
	t.Cleanup(func() {
		if out, err := runErr("", nil, dpkg, "--purge", "simdedge"); err != nil {
			t.Errorf("dpkg --purge: %v\n%s", err, out)
		}
	})
	run(t, "", nil, dpkg, "-i", deb)
	if v := run(t, "", nil, "/usr/bin/simdedge", "version"); !strings.HasPrefix(v, "simdedge ") {
		t.Errorf("installed simdedge version: %q", v)
	}
	if analyze, err := exec.LookPath("systemd-analyze"); err == nil {
		if out, _ := runErr("", nil, analyze, "verify", "--man=no", "/lib/systemd/system/simdedge.service", "/lib/systemd/system/simdedge.socket"); out != "" {
			t.Errorf("systemd-analyze verify of the installed units warns:\n%s", out)
		}
	}
	run(t, "", nil, dpkg, "-r", "simdedge")
	if _, err := os.Stat("/usr/bin/simdedge"); !os.IsNotExist(err) {
		t.Errorf("dpkg -r left /usr/bin/simdedge: %v", err)
	}
}
