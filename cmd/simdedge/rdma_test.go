//go:build rdma && cgo

package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/rdma"
	"github.com/simdedge/simdedge/server"
)

// TestEdgeToRDMABackend: a TCP client (net/http) -> the simdedge binary
// (built with -tags rdma, proxying to an rdma:// upstream) -> a backend
// served over the message transport in this process.
func TestEdgeToRDMABackend(t *testing.T) {
	backend := rdmaBackend(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "simdedge")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "go", "build", "-tags", "rdma", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cfg := filepath.Join(dir, "edge.yaml")
	os.WriteFile(cfg, fmt.Appendf(nil, `upstreams:
  - name: backend
    targets: ["rdma://%s?provider=tcp&credits=8&message_size=8192"]
limits: {max_body_bytes: 67108864}
routes:
  - match: {path_prefix: /}
    proxy: {upstream: backend}
`, backend), 0o644)
	cmd := exec.Command(bin, "serve", "-config", cfg, "-listen", "127.0.0.1:0")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			var rec struct {
				Msg  string   `json:"msg"`
				Addr []string `json:"addr"`
			}
			if json.Unmarshal(sc.Bytes(), &rec) == nil && rec.Msg == "serving" && len(rec.Addr) > 0 {
				addr <- rec.Addr[0]
			}
		}
	}()
	var edge string
	select {
	case edge = <-addr:
	case <-time.After(20 * time.Second):
		t.Fatal("the edge did not report its address in 20 s")
	}
	c := &http.Client{Timeout: 30 * time.Second}
	for _, size := range []int{0, 100, 20000, 8 << 20} {
		body := bytes.Repeat([]byte{'z'}, size)
		resp, err := c.Post("http://"+edge+"/up?x=1", "application/octet-stream", bytes.NewReader(body))
		if err != nil {
			t.Fatalf("%d-byte body: %v", size, err)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		sum := sha256.Sum256(body)
		want := fmt.Sprintf("POST /up?x=1 %d %x", size, sum[:8])
		if err != nil || resp.StatusCode != 200 || string(got) != want || resp.Header.Get("X-Backend") != "rdma" {
			t.Fatalf("%d-byte body: %d %q (%v), want %q", size, resp.StatusCode, got, err, want)
		}
	}
}

// rdmaBackend serves, over the message transport in this process, a
// handler that answers "METHOD TARGET LEN SHA256[:8]" of the request with
// X-Backend: rdma, and returns its address for an rdma:// target. It
// skips without an RDMA provider (testenv.NeedRDMA).
func rdmaBackend(t *testing.T) string {
	t.Helper()
	f, err := rdma.OpenFabric(rdma.Options{Provider: "tcp", Node: "127.0.0.1"})
	testenv.NeedRDMA(t, err)
	f.Close()

	ml, err := rdma.ListenMessages(rdma.ListenConfig{Address: "127.0.0.1:0", Credits: 8, MessageSize: 8192})
	if err != nil {
		t.Fatal(err)
	}
	srv := server.New(server.Options{Limits: server.Limits{MaxBodyBytes: 64 << 20}, Handler: server.HandlerFunc(func(w *server.ResponseWriter, r *server.Request) {
		body, err := r.BodyBytes()
		if err != nil {
			w.WriteHeader(server.StatusFor(err))
			return
		}
		sum := sha256.Sum256(body)
		w.AddHeader("X-Backend", "rdma")
		fmt.Fprintf(w, "%s %s %d %x", r.Method(), r.Target(), len(body), sum[:8])
	})})
	go srv.ServeMessages(ml)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	return ml.Addr().String()
}
