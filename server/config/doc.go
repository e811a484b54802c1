// Package config reads simdedge's YAML configuration (go.yaml.in/yaml/v3),
// validates it with errors that name the line and the key, and builds the
// server options, upstreams and routing table it describes.
//
//	listen: "127.0.0.1:8080"
//	limits:   {max_header_bytes: 65536, max_headers: 100, max_body_bytes: 10485760}
//	timeouts: {read_header: 10s, idle: 60s, write: 30s, drain: 15s}
//	upstreams:
//	  - name: app
//	    targets: ["127.0.0.1:9001", "127.0.0.1:9002"]
//	    timeouts: {connect: 2s, response_header: 30s}
//	routes:
//	  - match: {path_prefix: /healthz}
//	    respond: {status: 200, body: "ok\n"}
//	  - match: {path_prefix: /echo}
//	    echo: {}
//	  - match: {host: "api.example.com", path_prefix: /, methods: [GET, POST]}
//	    proxy: {upstream: app}
//
// Upstreams also take balancing, health, retry, timeout and connection-cap
// keys (Upstream, in upstream.go, lists them with their defaults), which
// translate to server/upstream's options (Upstream.PoolOptions).
//
// A route has exactly one action: respond (fixed response), echo, handler
// (a Go handler registered by name in BuildOptions.Handlers) or proxy. An
// upstream has targets, or "builtin: NAME" for targets the program supplies
// at build time (the CLI's demo upstream).
//
// A Config is a value: Build turns it into an immutable Snapshot (router
// table and upstream pools), so a reload can build the next snapshot beside
// the running one and swap it in atomically (router.Switch).
package config

// The configuration reference (docs/config.md) and JSON Schema
// (docs/simdedge.schema.json) are generated from these types and the doc
// table in internal/gendoc; a new key needs an entry there.
//go:generate go run ./internal/gendoc -root ../..
