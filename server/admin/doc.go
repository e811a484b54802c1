// Package admin is the admin listener: Prometheus metrics (/metrics, the
// text format or OpenMetrics by content negotiation), liveness (/healthz),
// readiness (/ready, 503 while draining), the effective configuration with
// secrets redacted (/config), upstream target state (/upstreams, JSON) and,
// when asked for, net/http/pprof (/debug/pprof/).
//
// It is not the hot path: it is served by net/http on a listener of its
// own. The counters it publishes are kept elsewhere (server/metrics, the
// upstream pools) and read at scrape time by a custom prometheus.Collector
// (collector.go), so that only this package and cmd import client_golang.
package admin
