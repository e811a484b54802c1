package interop

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// BenchmarkWebSocketEcho: one coder/websocket client echoes 64 KiB binary
// messages, one at a time, straight to the backend and through simdedge on
// each engine (the tunnel of an Upgrade), and through nginx (one worker,
// proxy_pass with the Upgrade headers set) when it is installed. Bytes
// count both ways. Run it
// with -benchtime and -count, and compare the rows of one run only: the
// client, the backend and simdedge share the machine.
func BenchmarkWebSocketEcho(b *testing.B) {
	const size = 64 << 10
	msg := make([]byte, size)
	for _, run := range []struct{ name, engine string }{{"direct", ""}, {"goroutine", "goroutine"}, {"loop", "loop"}, {"nginx", "nginx"}} {
		b.Run(run.name, func(b *testing.B) {
			be := startWSBackend(b)
			addr := be.addr
			switch run.engine {
			case "":
			case "nginx":
				addr = fmt.Sprintf("127.0.0.1:%d", freePort(b))
				startNginx(b, addr, be.addr)
			default:
				addr = fmt.Sprintf("127.0.0.1:%d", freePort(b))
				startSimdedge(b, fmt.Sprintf("engine: %s\nlisten: %q\nupstreams: [{name: ws, targets: [%q]}]\nroutes: [{match: {path_prefix: /}, proxy: {upstream: ws}}]\n",
					run.engine, addr, be.addr), addr)
			}
			ctx := context.Background()
			c, _, err := websocket.Dial(ctx, "ws://"+addr+"/echo", &websocket.DialOptions{CompressionMode: websocket.CompressionDisabled})
			if err != nil {
				b.Fatal(err)
			}
			defer c.CloseNow()
			c.SetReadLimit(2 * size)
			b.SetBytes(2 * size)
			b.ResetTimer()
			for range b.N {
				if err := c.Write(ctx, websocket.MessageBinary, msg); err != nil {
					b.Fatal(err)
				}
				if _, _, err := c.Read(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			c.Close(websocket.StatusNormalClosure, "")
			<-be.closes
		})
	}
}

// startNginx runs nginx in the foreground as a WebSocket proxy on addr to
// backend, or skips the benchmark when nginx is not installed; it is
// stopped by its PID.
func startNginx(b *testing.B, addr, backend string) {
	bin, err := exec.LookPath("nginx")
	if err != nil {
		b.Skip("nginx not installed (Debian nginx-light)")
	}
	dir := b.TempDir()
	conf := fmt.Sprintf(`daemon off;
master_process off;
worker_processes 1;
error_log stderr error;
pid %[1]s/nginx.pid;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path %[1]s; proxy_temp_path %[1]s; fastcgi_temp_path %[1]s;
  uwsgi_temp_path %[1]s; scgi_temp_path %[1]s;
  server {
    listen %[2]s;
    location / {
      proxy_pass http://%[3]s;
      proxy_http_version 1.1;
      proxy_set_header Upgrade $http_upgrade;
      proxy_set_header Connection "upgrade";
      proxy_read_timeout 3600s;
    }
  }
}
`, dir, addr, backend)
	file := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(file, []byte(conf), 0o600); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(bin, "-c", file, "-p", dir)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGQUIT)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(stopWait):
			cmd.Process.Kill()
			<-done
		}
	})
	waitListening(b, addr)
}
