package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/template"
	"time"
)

// responseBody is what every origin answers; benchpeer, nginx and the
// simdedge config all use these bytes, so every server writes the same
// response body.
const responseBody = "hello, world\n"

// readyTimeout bounds how long a server may take to answer its first
// request (a cold Go build is done before, so this is start-up only).
const readyTimeout = 20 * time.Second

// env holds what the servers are built from and run in.
type env struct {
	repo    string // repository root
	bench   string // bench module
	tmp     string // scratch directory for binaries, configs, logs
	taskset string // path of taskset, "" when pinning is unavailable
	nginx   string // path of nginx, "" when unavailable
	h2o     string // path of h2o, "" when unavailable
	wrk     string
	// serverCPU and clientCPU are the CPU lists for taskset.
	serverCPU, clientCPU string
	peerBin              string // benchpeer binary
	simdedgeBin          string // simdedge binary, "" when it did not build
	simdedgeErr          string // why simdedge cannot run
	// tls is the https area's certificate (nil unless it runs);
	// hsloadBin its handshake client, "" when it did not build.
	tls       *tlsFiles
	hsloadBin string
	// gzipRoot is the gzip area's served directory ("" unless it runs).
	gzipRoot string
	// h2load is the h2 area's client, "" when it is not installed.
	h2load string
}

// pinned prefixes argv with taskset when pinning is available.
func (e *env) pinned(cpu string, argv ...string) []string {
	if e.taskset == "" || cpu == "" {
		return argv
	}
	return append([]string{e.taskset, "-c", cpu}, argv...)
}

// serverSpec is one server under load.
type serverSpec struct {
	name string
	// start launches the server on port; upstreams are the backend
	// targets for proxies (none for origins).
	start func(e *env, port int, upstreams []string, cpu string) (*proc, error)
	// startPool, when set, launches one origin process that listens on
	// every port, each a target of a pool (nginx: a server block per
	// port), so a pool costs one process, as the single backend does.
	startPool func(e *env, ports []int, cpu string) (*proc, error)
}

func freePort() (int, error) {
	ps, err := freePorts(1)
	if err != nil {
		return 0, err
	}
	return ps[0], nil
}

// freePorts returns n distinct free loopback ports: every listener stays
// open until all n are chosen, so the kernel cannot hand out one twice.
func freePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer ln.Close()
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// waitReady polls the server until it answers 200 with the expected body,
// the process exits, or readyTimeout passes.
func waitReady(ctx context.Context, p *proc, port int) error {
	return waitReadyURL(ctx, p, "http://127.0.0.1:"+strconv.Itoa(port)+"/", &http.Client{Timeout: time.Second})
}

// waitReadyURL is waitReady on url with client (https: a client that
// trusts the run's CA).
func waitReadyURL(ctx context.Context, p *proc, url string, client *http.Client) error {
	deadline := time.Now().Add(readyTimeout)
	var last error
	for time.Now().Before(deadline) {
		if !p.alive() {
			return fmt.Errorf("exited (%v): %s", p.err, p.out.Last())
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		resp, err := client.Get(url)
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && string(body) == responseBody {
				return nil
			}
			last = fmt.Errorf("answered %d with %d bytes, want 200 %q", resp.StatusCode, len(body), responseBody)
		} else {
			last = err
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("not ready after %v: %v", readyTimeout, last)
}

// errBenchpeerPool: benchpeer's proxy has one target, so it cannot front a
// pool.
var errBenchpeerPool = errors.New("benchpeer proxies to one target, not a pool")

// peerServer runs benchpeer in mode.
func peerServer(mode string) serverSpec {
	return serverSpec{name: mode, start: func(e *env, port int, upstreams []string, cpu string) (*proc, error) {
		argv := []string{e.peerBin, "-mode", mode, "-listen", "127.0.0.1:" + strconv.Itoa(port)}
		switch len(upstreams) {
		case 0:
		case 1:
			argv = append(argv, "-upstream", upstreams[0])
		default:
			return nil, errBenchpeerPool
		}
		return startProc(mode, e.pinned(cpu, argv...), e.tmp)
	}}
}

// nginxConf is the generated nginx configuration: one worker (the server
// has one CPU), everything it writes under its own directory, access log
// off (the Go peers log nothing either), keep-alive without a request cap
// (the default of 1000 would make wrk reconnect), and for the proxy an
// upstream keep-alive pool.
var nginxConf = template.Must(template.New("nginx").Parse(`# generated by benchrun
daemon off;
master_process on;
worker_processes 1;
pid {{.Dir}}/nginx.pid;
error_log {{.Dir}}/error.log warn;
events { worker_connections 4096; }
http {
{{- if .AccessLog}}
    log_format edge escape=json '{"time":"$time_iso8601","remote":"$remote_addr","method":"$request_method","host":"$host","path":"$request_uri","proto":"$server_protocol","status":$status,"bytes_in":$request_length,"bytes_out":$body_bytes_sent,"duration":$request_time,"upstream":"backend","target":"$upstream_addr","request_id":"$request_id","user_agent":"$http_user_agent","tls":"$ssl_protocol"}';
    access_log {{.AccessLog}} edge buffer=64k flush=1s;
{{- else}}
    access_log off;
{{- end}}
    keepalive_requests 100000000;
    keepalive_timeout 75s;
    client_body_temp_path {{.Dir}}/client_body;
    proxy_temp_path {{.Dir}}/proxy;
    fastcgi_temp_path {{.Dir}}/fastcgi;
    uwsgi_temp_path {{.Dir}}/uwsgi;
    scgi_temp_path {{.Dir}}/scgi;
    default_type text/plain;
{{- if .Upstreams}}
    upstream backend {
{{- range .Upstreams}}
        server {{.}};
{{- end}}
        keepalive 256;
        keepalive_requests 100000000;
    }
{{- end}}
{{- range .Ports}}
    server {
        listen 127.0.0.1:{{.}}{{if $.TLS}} ssl{{end}}{{if $.H2}} http2{{end}};
{{- with $.TLS}}
        ssl_certificate {{.Cert}};
        ssl_certificate_key {{.Key}};
        ssl_protocols TLSv1.3;
        ssl_session_cache shared:SSL:10m;
        ssl_session_timeout 10m;
{{- end}}
        location / {
{{- if $.Upstreams}}
            proxy_pass http://backend;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
{{- if $.AccessLog}}
            proxy_set_header X-Request-Id $request_id;
            add_header X-Request-Id $request_id;
{{- end}}
{{- else}}
            return 200 "{{$.Body}}";
{{- end}}
        }
    }
{{- end}}
}
`))

// nginxServer runs nginx with a generated configuration under its own
// temporary directory, in the foreground (daemon off), so benchrun holds
// the master's PID.
func nginxServer() serverSpec {
	return serverSpec{name: "nginx",
		start: func(e *env, port int, upstreams []string, cpu string) (*proc, error) {
			return startNginx(e, []int{port}, upstreams, cpu)
		},
		startPool: func(e *env, ports []int, cpu string) (*proc, error) {
			return startNginx(e, ports, nil, cpu)
		},
	}
}

// nginxConfig is the generated configuration of an nginx that keeps
// everything under dir.
func nginxConfig(dir string, ports []int, upstreams []string) (string, error) {
	return nginxConfigTLS(dir, ports, upstreams, nil)
}

// nginxConfigTLS is nginxConfig whose servers terminate TLS 1.3 with the
// files of t (nil: plain HTTP), with a shared session cache as a typical
// HTTPS configuration has (the https area's clients do not resume, so it
// costs what it costs a real server: a lookup that misses).
func nginxConfigTLS(dir string, ports []int, upstreams []string, t *tlsFiles) (string, error) {
	return nginxConfigWith(dir, ports, upstreams, t, false, "")
}

// nginxConfigLog is nginxConfigTLS with a JSON access log (the observe
// area's fields) to the file accessLog, buffered ("" : access log off).
func nginxConfigLog(dir string, ports []int, upstreams []string, t *tlsFiles, accessLog string) (string, error) {
	return nginxConfigWith(dir, ports, upstreams, t, false, accessLog)
}

// nginxConfigWith is nginxConfigTLS whose listeners speak HTTP/2 when h2
// is set (on a plain port: h2c with prior knowledge only, in nginx 1.22),
// with the observe area's access log to accessLog unless it is "".
func nginxConfigWith(dir string, ports []int, upstreams []string, t *tlsFiles, h2 bool, accessLog string) (string, error) {
	var conf strings.Builder
	// The body goes into an nginx string literal: \n is nginx's escape.
	body := strings.ReplaceAll(responseBody, "\n", `\n`)
	err := nginxConf.Execute(&conf, map[string]any{"Dir": dir, "Ports": ports, "Upstreams": upstreams, "Body": body, "TLS": t, "H2": h2, "AccessLog": accessLog})
	return conf.String(), err
}

func startNginx(e *env, ports []int, upstreams []string, cpu string) (*proc, error) {
	return startNginxTLS(e, ports, upstreams, cpu, nil)
}

// startNginxTLS is startNginx with TLS listeners when t is set.
func startNginxTLS(e *env, ports []int, upstreams []string, cpu string, t *tlsFiles) (*proc, error) {
	return startNginxFull(e, ports, upstreams, cpu, t, false, false)
}

// startNginxWith is startNginxTLS with HTTP/2 listeners when h2 is set.
func startNginxWith(e *env, ports []int, upstreams []string, cpu string, t *tlsFiles, h2 bool) (*proc, error) {
	return startNginxFull(e, ports, upstreams, cpu, t, h2, false)
}

// startNginxLog is startNginxTLS with, if logged, a JSON access log to
// access.log in the server's directory.
func startNginxLog(e *env, ports []int, upstreams []string, cpu string, t *tlsFiles, logged bool) (*proc, error) {
	return startNginxFull(e, ports, upstreams, cpu, t, false, logged)
}

func startNginxFull(e *env, ports []int, upstreams []string, cpu string, t *tlsFiles, h2, logged bool) (*proc, error) {
	if e.nginx == "" {
		return nil, errors.New("nginx is not installed")
	}
	dir, err := os.MkdirTemp(e.tmp, "nginx-")
	if err != nil {
		return nil, err
	}
	accessLog := ""
	if logged {
		accessLog = filepath.Join(dir, "access.log")
	}
	conf, err := nginxConfigWith(dir, ports, upstreams, t, h2, accessLog)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		return nil, err
	}
	return startProc("nginx", e.pinned(cpu, e.nginx, "-p", dir, "-e", filepath.Join(dir, "error.log"), "-c", path), dir)
}

// simdedgeConf is a configuration for `simdedge serve` in the shape of
// server/config (listen; upstreams with targets; routes with a match and a
// respond or proxy action). benchrun runs `simdedge check` on it first, so a
// change of shape shows up in the report as that command's error.
var simdedgeConf = template.Must(template.New("simdedge").Parse(`# generated by benchrun
{{- if .TLS}}
listeners:
  - address: "127.0.0.1:{{.Port}}"
    tls:
      certificates:
        - {cert: "{{.TLS.Cert}}", key: "{{.TLS.Key}}"}
      min_version: "1.3"
{{- else if .H2C}}
listeners:
  - address: "127.0.0.1:{{.Port}}"
    h2c: true
{{- else}}
listen: "127.0.0.1:{{.Port}}"
{{- end}}
{{- if .Engine}}
engine: {{.Engine}}
{{- end}}
{{- if .ProxyOnLoop}}
proxy_on_loop: {{.ProxyOnLoop}}
{{- end}}
{{- if .Upstreams}}
upstreams:
  - name: backend
    targets: [{{range $i, $t := .Upstreams}}{{if $i}}, {{end}}"{{$t}}"{{end}}]
{{- with .Balancing}}
    balance: {{.Policy}}
    health: {passive: {consecutive_failures: {{.ConsecutiveFailures}}{{if .EjectFor}}, eject_for: {{.EjectFor}}{{end}}}}
{{- end}}
routes:
  - match: {path_prefix: /}
    proxy: {upstream: backend}
{{- else}}
routes:
  - match: {path_prefix: /}
    respond: {status: 200, body: "{{.Body}}", headers: {Content-Type: text/plain}}
{{- end}}
{{- if .Extra}}
{{.Extra}}
{{- end}}
`))

// simdedgeServer runs `simdedge serve` with a generated configuration;
// engine, when set, is the configuration's engine ("loop", "goroutine"),
// "loop-proxy" (the loop with proxy_on_loop: true) or "loop-handoff" (the
// loop with proxy_on_loop: false: proxied connections go to goroutines).
func simdedgeServer(name, engine string) serverSpec {
	return simdedgeBalancer(name, engine, nil)
}

// Balancing is the balance policy and passive health of a proxy's
// upstream in the generated simdedge configuration (server/config's
// balance and health.passive keys); nil leaves both to the defaults.
type Balancing struct {
	Policy string
	// ConsecutiveFailures is health.passive.consecutive_failures (0 turns
	// passive ejection off); EjectFor its eject_for (0: the default).
	ConsecutiveFailures int
	EjectFor            time.Duration
}

// simdedgeConfig is the generated configuration of `simdedge serve` on
// port: an origin without upstreams, else a proxy to them.
func simdedgeConfig(port int, upstreams []string, engine string, b *Balancing) (string, error) {
	return simdedgeConfigTLS(port, upstreams, engine, b, nil)
}

// simdedgeConfigTLS is simdedgeConfig on a TLS 1.3 listener serving the
// files of t (nil: plain HTTP).
func simdedgeConfigTLS(port int, upstreams []string, engine string, b *Balancing, t *tlsFiles) (string, error) {
	return simdedgeConfigAll(port, upstreams, engine, b, t, false, "")
}

// simdedgeConfigWith is simdedgeConfigTLS whose plain listener takes h2c
// when h2c is set (the h2 area).
func simdedgeConfigWith(port int, upstreams []string, engine string, b *Balancing, t *tlsFiles, h2c bool) (string, error) {
	return simdedgeConfigAll(port, upstreams, engine, b, t, h2c, "")
}

// simdedgeConfigExtra is simdedgeConfigTLS with extra top-level YAML
// appended (the observe area's admin, access_log and request_id keys).
func simdedgeConfigExtra(port int, upstreams []string, engine string, b *Balancing, t *tlsFiles, extra string) (string, error) {
	return simdedgeConfigAll(port, upstreams, engine, b, t, false, extra)
}

func simdedgeConfigAll(port int, upstreams []string, engine string, b *Balancing, t *tlsFiles, h2c bool, extra string) (string, error) {
	var conf strings.Builder
	body := strings.ReplaceAll(responseBody, "\n", `\n`)
	eng, proxyOnLoop := engine, ""
	switch engine {
	case "loop-proxy":
		eng, proxyOnLoop = "loop", "true"
	case "loop-handoff":
		eng, proxyOnLoop = "loop", "false"
	}
	err := simdedgeConf.Execute(&conf, map[string]any{"Port": port, "Upstreams": upstreams, "Balancing": b,
		"Body": body, "Engine": eng, "ProxyOnLoop": proxyOnLoop, "TLS": t, "H2C": h2c, "Extra": extra})
	return conf.String(), err
}

// simdedgeBalancer is simdedgeServer whose proxy upstream has the
// balancing b.
func simdedgeBalancer(name, engine string, b *Balancing) serverSpec {
	return serverSpec{name: name, start: func(e *env, port int, upstreams []string, cpu string) (*proc, error) {
		if e.simdedgeBin == "" {
			return nil, errors.New(e.simdedgeErr)
		}
		conf, err := simdedgeConfig(port, upstreams, engine, b)
		if err != nil {
			return nil, err
		}
		return startSimdedge(e, conf, cpu, nil)
	}}
}

// startSimdedge checks and serves the configuration conf with env added
// to benchrun's environment (e.g. SIMDEDGE_LOOP_TLS=off).
func startSimdedge(e *env, conf, cpu string, env []string) (*proc, error) {
	if e.simdedgeBin == "" {
		return nil, errors.New(e.simdedgeErr)
	}
	dir, err := os.MkdirTemp(e.tmp, "simdedge-")
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "simdedge.yaml")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
	defer cancel()
	if out, err := runCmd(ctx, dir, e.simdedgeBin, "check", "-config", path); err != nil {
		// errors.Unwrap drops runCmd's argv, which names temporary
		// paths that mean nothing in a report.
		return nil, fmt.Errorf("`simdedge check -config <generated yaml>` failed (%v): %s", errors.Unwrap(err), lastLine(out))
	}
	return startProcEnv("simdedge", e.pinned(cpu, e.simdedgeBin, "serve", "-config", path), dir, env)
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
