package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// loadTools are the Debian packages the load benchmarks need, by the
// binary each provides.
var loadTools = []struct{ bin, pkg string }{
	{"wrk", "wrk"},
	{"nginx", "nginx-light"},
}

// lookTool finds a binary on PATH or in /usr/sbin (nginx lives there and
// /usr/sbin is not on every user's PATH).
func lookTool(bin string) string {
	if p, err := exec.LookPath(bin); err == nil {
		return p
	}
	if p := "/usr/sbin/" + bin; fileExists(p) {
		return p
	}
	return ""
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// installMissing installs the missing load tools with apt-get (through
// sudo -n when not root) and returns notes for what could not be
// installed. apt-get update runs only if the first attempt fails, since
// the package lists are usually current.
func installMissing(ctx context.Context, logf func(string, ...any)) []string {
	var missing []string
	for _, t := range loadTools {
		if lookTool(t.bin) == "" {
			missing = append(missing, t.pkg)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if lookTool("apt-get") == "" {
		return []string{fmt.Sprintf("%s missing and apt-get is not available: install them to run those peers", strings.Join(missing, ", "))}
	}
	prefix := []string{}
	if os.Geteuid() != 0 {
		prefix = []string{"sudo", "-n"}
	}
	install := append(append([]string{}, prefix...), "env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "install", "-y", "-qq")
	install = append(install, missing...)
	logf("installing %s with apt-get", strings.Join(missing, " "))
	if _, err := runCmd(ctx, "/", install...); err != nil {
		update := append(append([]string{}, prefix...), "apt-get", "update", "-qq")
		if out, err := runCmd(ctx, "/", update...); err != nil {
			return []string{fmt.Sprintf("apt-get update failed (%v): %s; %s not installed", err, lastLine(out), strings.Join(missing, ", "))}
		}
		if out, err := runCmd(ctx, "/", install...); err != nil {
			return []string{fmt.Sprintf("apt-get install %s failed (%v): %s", strings.Join(missing, " "), err, lastLine(out))}
		}
	}
	return nil
}
