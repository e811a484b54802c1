package proxy

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/server"
)

// TestCurlThroughProxy: curl uploads with Expect: 100-continue (chunked and
// with a length) and downloads through the proxy.
func TestCurlThroughProxy(t *testing.T) {
	curl := testenv.Command(t, "curl")
	testenv.CheckGoroutines(t)
	o := startOrigin(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		fmt.Fprintf(w, "%s %d %s", r.Method, n, r.Header.Get("Expect"))
	}))
	addr, _ := startProxy(t, UpstreamOptions{Targets: []string{o.addr}}, server.Options{})
	file := filepath.Join(t.TempDir(), "up")
	if err := os.WriteFile(file, []byte(strings.Repeat("z", 300<<10)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, extra := range [][]string{nil, {"-H", "Transfer-Encoding: chunked"}} {
		args := append([]string{"-sS", "--max-time", "20", "-H", "Expect: 100-continue", "--data-binary", "@" + file}, extra...)
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		out, err := exec.CommandContext(ctx, curl, append(args, "http://"+addr+"/up")...).CombinedOutput()
		cancel()
		// The proxy answers the client's Expect itself and does not
		// forward it.
		if err != nil || string(out) != fmt.Sprintf("POST %d ", 300<<10) {
			t.Errorf("curl %v: %q %v", extra, out, err)
		}
	}
}
