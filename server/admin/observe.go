package admin

import "github.com/prometheus/client_golang/prometheus"

// TransportStat is one counter or gauge of a transport (Options.Transports).
type TransportStat struct {
	// Transport is "xdp" or "rdma"; Listener the listener's address or
	// interface; Name the event or item ("steered", "credits_held").
	Transport, Listener, Name string
	Value                     uint64
	// Gauge: a current state (published as simdedge_transport_state)
	// rather than a count of events.
	Gauge bool
}

func (c *collector) collectObserve(ch chan<- prometheus.Metric) {
	if c.log != nil {
		ch <- prometheus.MustNewConstMetric(descLogLines, prometheus.CounterValue, float64(c.log.Lines()))
		ch <- prometheus.MustNewConstMetric(descLogDropped, prometheus.CounterValue, float64(c.log.Dropped()))
	}
	if c.transports == nil {
		return
	}
	for _, s := range c.transports() {
		if s.Gauge {
			ch <- prometheus.MustNewConstMetric(descTransportGauge, prometheus.GaugeValue, float64(s.Value), s.Transport, s.Listener, s.Name)
		} else {
			ch <- prometheus.MustNewConstMetric(descTransport, prometheus.CounterValue, float64(s.Value), s.Transport, s.Listener, s.Name)
		}
	}
}
