package main

import (
	"fmt"
	"strings"
	"time"
)

// options are the suite's settings, from the flags.
type options struct {
	bin      string
	quick    bool
	engines  []string
	maxConns int
	// limitsYAML and timeoutsYAML are extra config lines ("k: v;k: v"),
	// for keys only newer builds have (limits.max_conns_per_ip, a body
	// rate): the suite itself writes only keys every build knows.
	limitsYAML   string
	timeoutsYAML string
	dir          string
	// note is the operator's line for the report's header.
	note string
}

const (
	engineLoop      = "loop"
	engineGoroutine = "goroutine"

	echoPath  = "/echo"
	proxyPath = "/up/attack"

	// defaultMaxConns keeps the idle flood short (the default max_conns,
	// 10,000, takes five times as long to fill) while well above the
	// flood's 300 connections per wave.
	defaultMaxConns = 2000
	// drainTimeout bounds a server's drain at stop: the suite closes its
	// clients first, so anything left is a connection the server holds.
	drainTimeout = 2 * time.Second
)

// variant is one server setup: an engine, and for proxy rows the proxy
// path.
type variant struct {
	engine string
	// proxyOnLoop is "true" or "false" for proxy rows on the loop engine,
	// and "" where the key is not written (origin rows, which proxy
	// nothing; the goroutine engine, where the config rejects true).
	proxyOnLoop string
	// path is the trickle's target (echoPath or proxyPath).
	path string
	// kind names what else a row varies, for the scenarios that vary
	// more (the protocol of h2map and normalise rows, the frame of
	// h2flood rows); the table prints it after the scenario.
	kind string
}

func originVariants(engines []string) []variant {
	var vs []variant
	for _, e := range engines {
		vs = append(vs, variant{engine: e})
	}
	return vs
}

func proxyVariants(engines []string) []variant {
	var vs []variant
	for _, e := range engines {
		if e == engineLoop {
			vs = append(vs, variant{engine: e, proxyOnLoop: "true"}, variant{engine: e, proxyOnLoop: "false"})
		} else {
			vs = append(vs, variant{engine: e})
		}
	}
	return vs
}

// params are the sizes and bounds that -quick scales down.
type params struct {
	floodHold    time.Duration
	floodSettle  time.Duration
	uploadSize   int
	trickleBound time.Duration
	slowBound    time.Duration
	// h2floodBound is how long an h2flood connection sends at most.
	h2floodBound time.Duration
}

func paramsFor(o *options) params {
	if o.quick {
		return params{
			floodHold:    time.Second,
			floodSettle:  time.Second,
			uploadSize:   quickUploadSize,
			trickleBound: 30 * time.Second,
			slowBound:    20 * time.Second,
			h2floodBound: 3 * time.Second,
		}
	}
	return params{
		floodHold:    3 * time.Second,
		floodSettle:  2 * time.Second,
		uploadSize:   uploadSize,
		trickleBound: 60 * time.Second,
		slowBound:    30 * time.Second,
		h2floodBound: 10 * time.Second,
	}
}

// configYAML is a server's configuration: only keys that every build of
// simdedge knows, plus the operator's extra lines.
func configYAML(o *options, v variant, listen, backend string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "listen: %q\n", listen)
	writeServerKeys(&b, o, v)
	fmt.Fprintf(&b, "upstreams:\n  - name: backend\n    targets: [%q]\n", backend)
	fmt.Fprintf(&b, "routes:\n  - match: {path_prefix: %s}\n    echo: {}\n  - match: {path_prefix: /up/}\n    proxy: {upstream: backend}\n", echoPath)
	return b.String()
}

// writeServerKeys writes the keys every configuration of the suite has:
// the variant's engine and proxy path, the limits and the timeouts.
func writeServerKeys(b *strings.Builder, o *options, v variant) {
	fmt.Fprintf(b, "engine: %s\n", v.engine)
	if v.proxyOnLoop != "" {
		fmt.Fprintf(b, "proxy_on_loop: %s\n", v.proxyOnLoop)
	}
	fmt.Fprintf(b, "limits:\n  max_conns: %d\n", o.maxConns)
	writeExtra(b, o.limitsYAML)
	fmt.Fprintf(b, "timeouts:\n  drain: %s\n", drainTimeout)
	writeExtra(b, o.timeoutsYAML)
}

// withKinds is every variant of vs with every kind.
func withKinds(vs []variant, kinds ...string) []variant {
	var out []variant
	for _, v := range vs {
		for _, k := range kinds {
			v.kind = k
			out = append(out, v)
		}
	}
	return out
}

// writeExtra writes "k: v;k: v" as indented mapping lines.
func writeExtra(b *strings.Builder, extra string) {
	for _, kv := range strings.Split(extra, ";") {
		if kv = strings.TrimSpace(kv); kv != "" {
			fmt.Fprintf(b, "  %s\n", kv)
		}
	}
}
