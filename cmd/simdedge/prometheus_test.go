package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// prometheusBinary is where Debian's prometheus package puts the server.
const prometheusBinary = "prometheus"

// promWait bounds how long the test waits for Prometheus to start and to
// have scraped the traffic (it scrapes every second; start-up on a loaded
// 2-CPU machine takes a few seconds).
const promWait = 60 * time.Second

// TestPrometheusScrape runs a real Prometheus against the admin listener:
// after known traffic through two routes (one proxied to an upstream of two
// targets), Prometheus's query API must report the request counts per
// route and per upstream target. On each engine and proxy path.
func TestPrometheusScrape(t *testing.T) {
	bin, err := exec.LookPath(prometheusBinary)
	if err != nil {
		if os.Getenv("REQUIRE_PROMETHEUS") != "" {
			t.Fatal("prometheus missing and REQUIRE_PROMETHEUS is set (apt-get install prometheus)")
		}
		t.Skip("prometheus not installed (Debian package prometheus)")
	}
	for _, e := range []struct{ name, engine, onLoop string }{
		{"goroutine", "goroutine", "false"},
		{"loop", "loop", "false"},
		{"loop-proxy", "loop", "true"},
	} {
		t.Run(e.name, func(t *testing.T) { testPrometheusScrape(t, bin, e.engine, e.onLoop) })
	}
}

func testPrometheusScrape(t *testing.T, bin, engine, onLoop string) {
	t1, t2 := startOriginHTTP(t), startOriginHTTP(t)
	adminAddr := freeAddr(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "c.yaml")
	writeFile(t, file, fmt.Sprintf(`engine: %s
proxy_on_loop: %s
admin: {address: %q}
upstreams:
  - name: app
    balance: round_robin
    targets: [%q, %q]
routes:
  - name: static
    match: {path_prefix: /static}
    respond: {status: 200, body: "ok\n"}
  - name: api
    match: {path_prefix: /api}
    proxy: {upstream: app}
`, engine, onLoop, adminAddr, t1, t2))
	addrs, logs := startServeLogs(t, "-config", file, "-listen", "127.0.0.1:0")

	const staticN, apiN = 7, 12 // apiN even: round robin gives each target half
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	for i := range staticN + apiN {
		path := "/static"
		if i >= staticN {
			path = "/api/x"
		}
		if code, body := fetch(t, client, "GET", "http://"+addrs[0]+path, ""); code != 200 {
			t.Fatalf("GET %s = %d %q; log: %s", path, code, body, logs.String())
		}
	}

	promAddr := freeAddr(t)
	promConf := filepath.Join(dir, "prometheus.yml")
	writeFile(t, promConf, fmt.Sprintf(`global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: simdedge
    static_configs: [{targets: [%q]}]
`, adminAddr))
	cmd := exec.Command(bin, "--config.file="+promConf, "--storage.tsdb.path="+filepath.Join(dir, "tsdb"),
		"--web.listen-address="+promAddr, "--log.level=warn")
	var promLog syncBuffer
	cmd.Stdout, cmd.Stderr = &promLog, &promLog
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM) // by PID: only the process this test started
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(promWait):
			cmd.Process.Kill()
			<-done
		}
	}()

	want := map[string]float64{
		`sum(simdedge_requests_total{route="static",status_class="2xx"})`:                     staticN,
		`sum(simdedge_requests_total{route="api",status_class="2xx"})`:                        apiN,
		fmt.Sprintf(`simdedge_upstream_requests_total{upstream="app",target=%q}`, t1):         apiN / 2,
		fmt.Sprintf(`simdedge_upstream_requests_total{upstream="app",target=%q}`, t2):         apiN / 2,
		`simdedge_request_duration_seconds_count{route="api"}`:                                apiN,
		fmt.Sprintf(`sum(simdedge_requests_total{listener=%q,route="static"})`, addrs[0]):     staticN,
		fmt.Sprintf(`simdedge_upstream_response_seconds_count{upstream="app",target=%q}`, t1): apiN / 2,
	}
	deadline := time.Now().Add(promWait)
	for q, v := range want {
		for {
			got, err := promQuery(client, promAddr, q)
			if err == nil && got == v {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("query %s: got %v (err %v), want %v; prometheus log: %s", q, got, err, v, promLog.String())
			}
			time.Sleep(250 * time.Millisecond)
		}
	}
}

// promQuery asks Prometheus's HTTP API for the one value of an instant
// query.
func promQuery(c *http.Client, addr, q string) (float64, error) {
	resp, err := c.Get("http://" + addr + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var r struct {
		Status string
		Data   struct {
			Result []struct {
				Value [2]any
			}
		}
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&r); err != nil {
		return 0, err
	}
	if r.Status != "success" || len(r.Data.Result) != 1 {
		return 0, fmt.Errorf("status %q, %d results", r.Status, len(r.Data.Result))
	}
	s, _ := r.Data.Result[0].Value[1].(string)
	return strconv.ParseFloat(s, 64)
}
