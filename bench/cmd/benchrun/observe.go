package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/simdedge/simdedge/bench/internal/report"
)

// The observe scenario (area observe, issue 22's Speed section): the proxy
// scenario with observability off and on. simdedge-logged has what the
// issue's first target names: the admin listener (so every request is
// counted) and a JSON access log to a file; simdedge-observed adds request
// IDs (generated, forwarded, returned), as nginx-logged has $request_id
// beside a JSON access log of the same fields to a file (buffered, as
// simdedge's is: buffer=64k flush=1s). The targets: simdedge-logged at
// most 1.10x simdedge-plain's CPU per request, and simdedge-observed at or
// below nginx-logged's.

// Row names of the observe scenario.
const (
	observePlain    = "simdedge-plain"
	observeLogged   = "simdedge-logged"
	observeObserved = "simdedge-observed"
	observeNginx    = "nginx-plain"
	observeNginxLog = "nginx-logged"
)

var observeBench = map[string]string{
	observePlain:    "proxy=simdedge/observe=off",
	observeLogged:   "proxy=simdedge/observe=log",
	observeObserved: "proxy=simdedge/observe=on",
	observeNginx:    "proxy=nginx/observe=off",
	observeNginxLog: "proxy=nginx/observe=on",
}

var observePairs = []report.Pair{
	{Num: observeLogged, Den: observePlain},
	{Num: observeObserved, Den: observePlain},
	{Num: observeObserved, Den: observeNginxLog},
	{Num: observeNginxLog, Den: observeNginx},
}

const observeCompare = "go tool benchstat -filter '/proxy:simdedge .unit:cpu-sec/req' -col /observe <run>.txt"

// observeScenario is the observe area on simdedge's engine (the
// configuration's default when empty) in front of backend.
func observeScenario(engine string, backend serverSpec) scenario {
	return scenario{kind: "observe", peer: observePlain, backend: &backend,
		servers: []serverSpec{
			simdedgeObserved(observePlain, engine, observeOff),
			simdedgeObserved(observeLogged, engine, observeLog),
			simdedgeObserved(observeObserved, engine, observeAll),
			nginxLogged(observeNginx, false),
			nginxLogged(observeNginxLog, true),
		},
		pairs:     observePairs,
		alternate: true,
		bench:     observeBench,
		note: "Proxies with observability off and on: simdedge with `admin` (counting on) and `access_log: {path: FILE, format: json}` (simdedge-logged), plus `request_id: {}` (simdedge-observed), against the same without; nginx with a JSON `access_log` of the same fields to a file (`buffer=64k flush=1s`) and `$request_id` forwarded and returned, against `access_log off`. " +
			"The rows' benchmark lines compare with `" + observeCompare + "` (off against on) or `-filter '/observe:on .unit:cpu-sec/req' -col /proxy` (simdedge against nginx).",
	}
}

// What a simdedge row of the observe area turns on.
type observeLevel int

const (
	observeOff observeLevel = iota
	observeLog              // admin (counting) and the JSON access log
	observeAll              // and request IDs
)

// simdedgeObserved is simdedge proxying with observability at level on.
func simdedgeObserved(name, engine string, on observeLevel) serverSpec {
	return serverSpec{name: name, start: func(e *env, port int, upstreams []string, cpu string) (*proc, error) {
		if e.simdedgeBin == "" {
			return nil, errors.New(e.simdedgeErr)
		}
		extra := ""
		if on != observeOff {
			adminPort, err := freePort()
			if err != nil {
				return nil, err
			}
			dir, err := os.MkdirTemp(e.tmp, "observe-")
			if err != nil {
				return nil, err
			}
			extra = fmt.Sprintf("admin: {address: \"127.0.0.1:%d\"}\naccess_log: {path: %q, format: json}",
				adminPort, filepath.Join(dir, "access.log"))
			if on == observeAll {
				extra += "\nrequest_id: {}"
			}
		}
		conf, err := simdedgeConfigExtra(port, upstreams, engine, nil, nil, extra)
		if err != nil {
			return nil, err
		}
		return startSimdedge(e, conf, cpu, nil)
	}}
}

// nginxLogged is nginx proxying with a JSON access log to a file (on) or
// none.
func nginxLogged(name string, on bool) serverSpec {
	return serverSpec{name: name, start: func(e *env, port int, upstreams []string, cpu string) (*proc, error) {
		return startNginxLog(e, []int{port}, upstreams, cpu, nil, on)
	}}
}
