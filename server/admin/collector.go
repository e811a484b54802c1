package admin

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/simdedge/simdedge/server/accesslog"
	"github.com/simdedge/simdedge/server/metrics"
	"github.com/simdedge/simdedge/server/upstream"
)

// Metric names, declared once (Prometheus naming: the simdedge_ prefix,
// base units, _total on counters).
const namespace = "simdedge"

var (
	descRequests = prometheus.NewDesc(namespace+"_requests_total",
		"Requests answered, by listener address, route, method and status class.", []string{"listener", "route", "method", "status_class"}, nil)
	descDuration = prometheus.NewDesc(namespace+"_request_duration_seconds",
		"Time from a complete request head to the end of its response, by route.", []string{"route"}, nil)
	descBytesIn = prometheus.NewDesc(namespace+"_request_bytes_total",
		"Request bytes received (head and declared body length), by route.", []string{"route"}, nil)
	descBytesOut = prometheus.NewDesc(namespace+"_response_body_bytes_total",
		"Response body bytes sent, by route.", []string{"route"}, nil)
	descConnsOpened = prometheus.NewDesc(namespace+"_connections_total",
		"Connections accepted and served, by listener address.", []string{"listener"}, nil)
	descConnsActive = prometheus.NewDesc(namespace+"_connections_active",
		"Connections open now, by listener address.", []string{"listener"}, nil)
	descRefused = prometheus.NewDesc(namespace+"_connections_refused_total",
		"Connections closed unserved by a limit, by listener address and reason.", []string{"listener", "reason"}, nil)
	descParseErrors = prometheus.NewDesc(namespace+"_parse_errors_total",
		"Requests answered with an error before any handler ran (malformed, too large, unsupported, timed out), by listener address and status.", []string{"listener", "status"}, nil)

	descUpRequests = prometheus.NewDesc(namespace+"_upstream_requests_total",
		"Requests sent to an upstream target.", []string{"upstream", "target"}, nil)
	descUpFailures = prometheus.NewDesc(namespace+"_upstream_failures_total",
		"Upstream requests that failed (connect, timeout, bad response).", []string{"upstream", "target"}, nil)
	descUpEjections = prometheus.NewDesc(namespace+"_upstream_ejections_total",
		"Times a target was ejected by passive health checks.", []string{"upstream", "target"}, nil)
	descUpChecks = prometheus.NewDesc(namespace+"_upstream_health_checks_total",
		"Active health checks, by result.", []string{"upstream", "target", "result"}, nil)
	descUpHealthy = prometheus.NewDesc(namespace+"_upstream_target_healthy",
		"Active health verdict: 1 healthy, 0 unhealthy, -1 not decided (no checks).", []string{"upstream", "target"}, nil)
	descUpEjected = prometheus.NewDesc(namespace+"_upstream_target_ejected",
		"1 while the target is ejected.", []string{"upstream", "target"}, nil)
	descUpInFlight = prometheus.NewDesc(namespace+"_upstream_target_in_flight",
		"Requests in flight to the target.", []string{"upstream", "target"}, nil)
	descUpResponses = prometheus.NewDesc(namespace+"_upstream_responses_total",
		"Upstream responses, by status class.", []string{"upstream", "target", "status_class"}, nil)
	descUpErrors = prometheus.NewDesc(namespace+"_upstream_errors_total",
		"Upstream attempts that got no response, by kind (connect_failure, reset, timeout, canceled).", []string{"upstream", "target", "kind"}, nil)
	descUpRetriesTotal = prometheus.NewDesc(namespace+"_upstream_retries_total",
		"Retries made (failovers after a connect failure included).", []string{"upstream"}, nil)
	descUpBudget = prometheus.NewDesc(namespace+"_upstream_retry_budget_refusals_total",
		"Retries the retry budget refused.", []string{"upstream"}, nil)
	descUpRetries = prometheus.NewDesc(namespace+"_upstream_retries_in_flight",
		"Retry-budget tokens held now.", []string{"upstream"}, nil)

	descTLS = prometheus.NewDesc(namespace+"_tls_handshakes_total",
		"TLS handshakes on a listener, by outcome (ok, failed, plain_http, not_tls).", []string{"listener", "outcome"}, nil)
	descH2Conns = prometheus.NewDesc(namespace+"_http2_connections_total",
		"Connections that began HTTP/2 on a listener (h2c prior knowledge or h2 by ALPN).", []string{"listener"}, nil)
	descH2Streams = prometheus.NewDesc(namespace+"_http2_streams_total",
		"HTTP/2 streams opened on a listener (each carries one request).", []string{"listener"}, nil)
	descH2Resets = prometheus.NewDesc(namespace+"_http2_stream_resets_total",
		"HTTP/2 streams the client reset or the server refused, on a listener (the rapid-reset bound counts these per connection).", []string{"listener"}, nil)
	descH3Conns = prometheus.NewDesc(namespace+"_http3_connections_total",
		"QUIC connections that completed their handshake on a listener (HTTP/3).", []string{"listener"}, nil)
	descH3Streams = prometheus.NewDesc(namespace+"_http3_streams_total",
		"HTTP/3 request streams on a listener (each carries one request).", []string{"listener"}, nil)
	descH3Errors = prometheus.NewDesc(namespace+"_http3_errors_total",
		"HTTP/3 streams or connections that ended in a protocol error or were refused, on a listener.", []string{"listener"}, nil)
	descH3Retries = prometheus.NewDesc(namespace+"_http3_retries_total",
		"Retry packets sent to make new clients prove their address (handshakes in flight over http3.retry_threshold).", []string{"listener"}, nil)
	descUpLatency = prometheus.NewDesc(namespace+"_upstream_response_seconds",
		"Time from sending a request to a target (connecting included) to its response head.", []string{"upstream", "target"}, nil)

	descLogLines = prometheus.NewDesc(namespace+"_access_log_lines_total",
		"Access-log lines written to the sink.", nil, nil)
	descLogDropped = prometheus.NewDesc(namespace+"_access_log_dropped_total",
		"Access-log lines dropped because the sink stalled or failed (never waited for).", nil, nil)
	descTransport = prometheus.NewDesc(namespace+"_transport_events_total",
		"Events counted by the xdp and rdma transports themselves (xdp: steered, passed, fallback, dropped by the steering program; received, sent, dropped frames; rdma: connections accepted, requests served inline), by transport, listener and event.", []string{"transport", "listener", "event"}, nil)
	descTransportGauge = prometheus.NewDesc(namespace+"_transport_state",
		"Current state of the xdp and rdma transports (rdma: connections open, receive credits held by messages being served, messages queued), by transport, listener and item.", []string{"transport", "listener", "item"}, nil)
)

// collector publishes a metrics.Set and the upstream pools at scrape time.
type collector struct {
	set        *metrics.Set
	pools      func() map[string]*upstream.Pool
	log        *accesslog.Log
	transports func() []TransportStat
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descRequests, descDuration, descBytesIn, descBytesOut,
		descConnsOpened, descConnsActive, descRefused, descParseErrors,
		descUpRequests, descUpFailures, descUpEjections, descUpChecks, descUpHealthy,
		descUpEjected, descUpInFlight, descUpRetries, descUpResponses, descUpErrors,
		descUpRetriesTotal, descUpBudget, descLogLines, descLogDropped, descTransport, descTransportGauge, descTLS, descUpLatency, descH2Conns, descH2Streams, descH2Resets, descH3Conns, descH3Streams, descH3Errors, descH3Retries, descReloadOK, descReloadAt} {
		ch <- d
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	if c.set != nil {
		c.collectRoutes(ch)
		c.collectConns(ch)
		c.collectReload(ch)
	}
	if c.pools != nil {
		c.collectUpstreams(ch)
	}
	c.collectObserve(ch)
}

func (c *collector) collectRoutes(ch chan<- prometheus.Metric) {
	var slots [metrics.ListenerSlots]string
	for i := range slots {
		slots[i] = c.set.SlotName(i)
	}
	for _, r := range c.set.Routes() {
		t := r.Totals()
		name := r.Name()
		for l := range t.ByListener {
			for m := range t.ByListener[l] {
				for cl, n := range t.ByListener[l][m] {
					if n == 0 {
						continue // a series per route appears with its first request
					}
					ch <- prometheus.MustNewConstMetric(descRequests, prometheus.CounterValue, float64(n), slots[l], name, metrics.MethodNames[m], metrics.ClassNames[cl])
				}
			}
		}
		count := t.Buckets[len(t.Buckets)-1]
		if count == 0 {
			continue
		}
		buckets := make(map[float64]uint64, len(metrics.DurationBuckets))
		for i, ub := range metrics.DurationBuckets {
			buckets[ub] = t.Buckets[i]
		}
		ch <- prometheus.MustNewConstHistogram(descDuration, count, t.Sum.Seconds(), buckets, name)
		ch <- prometheus.MustNewConstMetric(descBytesIn, prometheus.CounterValue, float64(t.BytesIn), name)
		ch <- prometheus.MustNewConstMetric(descBytesOut, prometheus.CounterValue, float64(t.BytesOut), name)
	}
}

func (c *collector) collectConns(ch chan<- prometheus.Metric) {
	for _, l := range c.set.Listeners() {
		t, name := l.Totals(), l.Name()
		ch <- prometheus.MustNewConstMetric(descConnsOpened, prometheus.CounterValue, float64(t.Opened), name)
		ch <- prometheus.MustNewConstMetric(descConnsActive, prometheus.GaugeValue, float64(t.Active()), name)
		for k, n := range t.Refused {
			ch <- prometheus.MustNewConstMetric(descRefused, prometheus.CounterValue, float64(n), name, metrics.RefusalNames[k])
		}
		for k, n := range t.ParseErrors {
			status := "other"
			if k < len(metrics.ParseStatuses) {
				status = strconv.Itoa(metrics.ParseStatuses[k])
			}
			ch <- prometheus.MustNewConstMetric(descParseErrors, prometheus.CounterValue, float64(n), name, status)
		}
		for k, n := range t.TLS {
			if n > 0 { // only TLS listeners get the series
				ch <- prometheus.MustNewConstMetric(descTLS, prometheus.CounterValue, float64(n), name, metrics.TLSNames[k])
			}
		}
		if h := t.HTTP2; h[metrics.H2Conn] > 0 { // only listeners that saw HTTP/2
			ch <- prometheus.MustNewConstMetric(descH2Conns, prometheus.CounterValue, float64(h[metrics.H2Conn]), name)
			ch <- prometheus.MustNewConstMetric(descH2Streams, prometheus.CounterValue, float64(h[metrics.H2Stream]), name)
			ch <- prometheus.MustNewConstMetric(descH2Resets, prometheus.CounterValue, float64(h[metrics.H2Reset]), name)
		}
		if h := t.HTTP3; h[metrics.H3Conn] > 0 || h[metrics.H3Retry] > 0 { // only listeners that saw HTTP/3
			ch <- prometheus.MustNewConstMetric(descH3Conns, prometheus.CounterValue, float64(h[metrics.H3Conn]), name)
			ch <- prometheus.MustNewConstMetric(descH3Streams, prometheus.CounterValue, float64(h[metrics.H3Stream]), name)
			ch <- prometheus.MustNewConstMetric(descH3Errors, prometheus.CounterValue, float64(h[metrics.H3Error]), name)
			ch <- prometheus.MustNewConstMetric(descH3Retries, prometheus.CounterValue, float64(h[metrics.H3Retry]), name)
		}
	}
}

func (c *collector) collectUpstreams(ch chan<- prometheus.Metric) {
	var buf []upstream.TargetState
	for name, p := range c.pools() {
		buf = p.Snapshot(buf[:0])
		for _, s := range buf {
			l := []string{name, s.Address}
			ch <- prometheus.MustNewConstMetric(descUpRequests, prometheus.CounterValue, float64(s.Requests), l...)
			ch <- prometheus.MustNewConstMetric(descUpFailures, prometheus.CounterValue, float64(s.Failures), l...)
			ch <- prometheus.MustNewConstMetric(descUpEjections, prometheus.CounterValue, float64(s.EjectedTotal), l...)
			ch <- prometheus.MustNewConstMetric(descUpChecks, prometheus.CounterValue, float64(s.ChecksOK), name, s.Address, "ok")
			ch <- prometheus.MustNewConstMetric(descUpChecks, prometheus.CounterValue, float64(s.ChecksFailed), name, s.Address, "failed")
			ch <- prometheus.MustNewConstMetric(descUpHealthy, prometheus.GaugeValue, healthValue(s.Health), l...)
			ch <- prometheus.MustNewConstMetric(descUpEjected, prometheus.GaugeValue, boolValue(s.Ejected), l...)
			ch <- prometheus.MustNewConstMetric(descUpInFlight, prometheus.GaugeValue, float64(s.InFlight), l...)
			for cl, n := range s.ByClass {
				ch <- prometheus.MustNewConstMetric(descUpResponses, prometheus.CounterValue, float64(n), name, s.Address, metrics.ClassNames[cl])
			}
			for o := upstream.Response + 1; int(o) < upstream.Outcomes; o++ {
				ch <- prometheus.MustNewConstMetric(descUpErrors, prometheus.CounterValue, float64(s.ByOutcome[o]), name, s.Address, o.String())
			}
			if n := s.Latency.Count(); n > 0 {
				ch <- prometheus.MustNewConstHistogram(descUpLatency, n, s.Latency.Sum.Seconds(), histBuckets(&s.Latency), l...)
			}
		}
		ch <- prometheus.MustNewConstMetric(descUpRetries, prometheus.GaugeValue, float64(p.RetriesInFlight()), name)
		ch <- prometheus.MustNewConstMetric(descUpRetriesTotal, prometheus.CounterValue, float64(p.Retries()), name)
		ch <- prometheus.MustNewConstMetric(descUpBudget, prometheus.CounterValue, float64(p.BudgetRefusals()), name)
	}
}

// histBuckets maps cumulative totals to client_golang's bucket map.
func histBuckets(t *metrics.HistogramTotals) map[float64]uint64 {
	b := make(map[float64]uint64, len(metrics.DurationBuckets))
	for i, ub := range metrics.DurationBuckets {
		b[ub] = t.Buckets[i]
	}
	return b
}

func healthValue(h upstream.Health) float64 {
	switch h {
	case upstream.HealthHealthy:
		return 1
	case upstream.HealthUnhealthy:
		return 0
	}
	return -1
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
