package router

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/internal/testnet"
	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/internal/servetest"
)

// startH2CRouter serves a table with a respond route (/r) and an echo
// route (/) on an h2c listener.
func startH2CRouter(t *testing.T) string {
	t.Helper()
	testenv.CheckGoroutines(t)
	tab, err := New([]Route{
		{Match: Match{PathPrefix: "/r"}, Handler: Respond(200, "responded\n", [][2]string{{"Content-Type", "text/plain"}})},
		{Match: Match{PathPrefix: "/"}, Handler: Echo()},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := server.New(server.Options{Handler: tab})
	return servetest.ServeH2C(t, s, testEngine)
}

type h2Echoed struct {
	Method, Target, Version, Host string
	Headers                       [][2]string
	BodyLen                       int `json:"body_len"`
}

// TestH2RouterClients: echo and respond routes answer x/net/http2's
// client, curl --http2-prior-knowledge and nghttp over h2c.
func TestH2RouterClients(t *testing.T) {
	addr := startH2CRouter(t)
	c := &http.Client{Timeout: 10 * time.Second, Transport: testnet.H2Transport(nil)}
	resp, err := c.Post("http://"+addr+"/echo?x=1", "text/plain", strings.NewReader(strings.Repeat("b", 100000)))
	if err != nil {
		t.Fatal(err)
	}
	var e h2Echoed
	err = json.NewDecoder(resp.Body).Decode(&e)
	resp.Body.Close()
	if err != nil || resp.ProtoMajor != 2 || e.Method != "POST" || e.Target != "/echo?x=1" || e.Version != "HTTP/2" || e.Host != addr || e.BodyLen != 100000 {
		t.Fatalf("echo over h2: %+v proto %d err %v", e, resp.ProtoMajor, err)
	}
	resp, err = c.Get("http://" + addr + "/r")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "responded\n" || resp.Header.Get("Content-Type") != "text/plain" {
		t.Fatalf("respond over h2: %q %v", b, resp.Header)
	}

	curl := testenv.Command(t, "curl")
	run := func(name string, args ...string) string {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
		return string(out)
	}
	out := run(curl, "-sS", "--http2-prior-knowledge", "-w", " %{http_version}", "http://"+addr+"/r")
	if out != "responded\n 2" {
		t.Errorf("curl respond: %q", out)
	}
	out = run(curl, "-sS", "--http2-prior-knowledge", "--data-binary", "hello", "http://"+addr+"/echo")
	if err := json.Unmarshal([]byte(out), &e); err != nil || e.BodyLen != 5 || e.Version != "HTTP/2" {
		t.Errorf("curl echo: %q", out)
	}
	nghttp := testenv.Command(t, "nghttp")
	out = run(nghttp, "-n", "-s", "http://"+addr+"/r", "http://"+addr+"/echo")
	if !strings.Contains(out, "200") {
		t.Errorf("nghttp: %s", out)
	}
	out = run(nghttp, "http://"+addr+"/r")
	if out != "responded\n" {
		t.Errorf("nghttp body: %q", out)
	}
}
