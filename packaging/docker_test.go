package packaging

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDockerfile checks packaging/Dockerfile without docker (no daemon and
// no image registry is needed): it is multi-stage, its final image is
// distroless static or scratch and runs as a non-root user, its Go image
// is at least go.mod's Go, what it copies exists, and its build stage's
// `go build` line, run here as written, makes a static binary stamped with
// the build arguments.
func TestDockerfile(t *testing.T) {
	df := readFile(t, filepath.Join(root(t), "packaging/Dockerfile"))
	lines := dockerLines(df)
	args := map[string]string{}
	var froms, runs, copies []string
	user := ""
	for _, l := range lines {
		instr, rest, _ := strings.Cut(l, " ")
		switch strings.ToUpper(instr) {
		case "ARG":
			k, v, _ := strings.Cut(rest, "=")
			args[k] = v
		case "FROM":
			froms = append(froms, rest)
		case "RUN":
			runs = append(runs, rest)
		case "COPY":
			copies = append(copies, rest)
		case "USER":
			user = rest
		}
	}
	if len(froms) < 2 {
		t.Fatalf("not multi-stage: FROM %v", froms)
	}
	final := froms[len(froms)-1]
	if !strings.HasPrefix(final, "gcr.io/distroless/static") && final != "scratch" {
		t.Errorf("final image %q, want distroless static or scratch", final)
	}
	if user == "" || user == "root" || strings.HasPrefix(user, "0") {
		t.Errorf("USER %q, want a non-root user", user)
	}

	// The builder's Go is at least the one go.mod asks for.
	gomod := readFile(t, filepath.Join(root(t), "go.mod"))
	want := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindStringSubmatch(gomod)
	if want == nil || !strings.HasPrefix(froms[0], "golang:${GO_VERSION}") || !versionAtLeast(args["GO_VERSION"], want[1]) {
		t.Errorf("build stage %q with GO_VERSION=%q, want golang:${GO_VERSION} with at least go.mod's %v", froms[0], args["GO_VERSION"], want)
	}

	// What the final stage copies from the context exists.
	for _, c := range copies {
		f := strings.Fields(c)
		if strings.HasPrefix(f[0], "--from=") || f[0] == "." {
			continue
		}
		for _, src := range f[:len(f)-1] {
			if _, err := os.Stat(filepath.Join(root(t), src)); err != nil {
				t.Errorf("COPY %s: no such file in the repository", src)
			}
		}
	}

	// The go build line, as written, with the output moved here.
	var build string
	for _, r := range runs {
		if strings.Contains(r, "go build") {
			build = r
		}
	}
	if build == "" || !strings.Contains(build, "CGO_ENABLED=0") {
		t.Fatalf("no static go build line (CGO_ENABLED=0 go build) in %v", runs)
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go not found: the build line needs it")
	}
	bin := filepath.Join(t.TempDir(), "simdedge")
	build = strings.Replace(build, "-o /out/simdedge", "-o "+bin, 1)
	env := []string{"VERSION=v9.9.9-test", "COMMIT=abc123", "BUILD_DATE=2000-01-01T00:00:00Z"}
	run(t, root(t), env, "sh", "-c", build)
	if v := run(t, "", nil, bin, "version"); !strings.Contains(v, "v9.9.9-test") {
		t.Errorf("version %q does not carry the VERSION build argument", v)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("the binary is dynamically linked (%v): distroless static has no libc", p.Type)
		}
	}
}

// dockerLines returns the Dockerfile's instructions, continuation lines
// joined and comments dropped.
func dockerLines(df string) []string {
	var out []string
	cur := ""
	for _, l := range strings.Split(df, "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "#") || l == "" && cur == "" {
			continue
		}
		if strings.HasSuffix(l, "\\") {
			cur += strings.TrimSuffix(l, "\\") + " "
			continue
		}
		cur += l
		if cur != "" {
			out = append(out, cur)
		}
		cur = ""
	}
	return out
}

// versionAtLeast compares "major.minor" strings.
func versionAtLeast(have, want string) bool {
	hm, hn, _ := strings.Cut(have, ".")
	wm, wn, _ := strings.Cut(want, ".")
	if len(hm) != len(wm) {
		return len(hm) > len(wm)
	}
	if hm != wm {
		return hm > wm
	}
	if len(hn) != len(wn) {
		return len(hn) > len(wn)
	}
	return hn >= wn
}
