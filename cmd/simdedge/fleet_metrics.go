//go:build fleet

package main

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/simdedge/simdedge/server/xds"
)

// The xDS client's metrics, read from its Status at scrape time.
var (
	xdsConnectedDesc = prometheus.NewDesc("simdedge_xds_connected",
		"1 while the ADS stream to the control plane is up.", nil, nil)
	xdsResponsesDesc = prometheus.NewDesc("simdedge_xds_responses_total",
		"Discovery responses received, by result: ack or nack.", []string{"result"}, nil)
	xdsAppliedDesc = prometheus.NewDesc("simdedge_xds_applied_total",
		"Configurations from the control plane applied.", nil, nil)
	xdsReconnectsDesc = prometheus.NewDesc("simdedge_xds_reconnects_total",
		"Times the ADS stream ended and the client reconnected.", nil, nil)
	xdsVersionDesc = prometheus.NewDesc("simdedge_xds_version_info",
		"The last ACKed version_info of each resource type (value 1).", []string{"type", "version"}, nil)
	xdsLastNackDesc = prometheus.NewDesc("simdedge_xds_last_nack_timestamp_seconds",
		"When the last response was NACKed (Unix seconds; absent before the first).", []string{"type"}, nil)
)

type xdsCollector struct{ c *xds.Client }

func (x xdsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{xdsConnectedDesc, xdsResponsesDesc, xdsAppliedDesc, xdsReconnectsDesc, xdsVersionDesc, xdsLastNackDesc} {
		ch <- d
	}
}

func (x xdsCollector) Collect(ch chan<- prometheus.Metric) {
	s := x.c.Status()
	up := 0.0
	if s.Connected {
		up = 1
	}
	ch <- prometheus.MustNewConstMetric(xdsConnectedDesc, prometheus.GaugeValue, up)
	ch <- prometheus.MustNewConstMetric(xdsResponsesDesc, prometheus.CounterValue, float64(s.Acks), "ack")
	ch <- prometheus.MustNewConstMetric(xdsResponsesDesc, prometheus.CounterValue, float64(s.Nacks), "nack")
	ch <- prometheus.MustNewConstMetric(xdsAppliedDesc, prometheus.CounterValue, float64(s.Applied))
	ch <- prometheus.MustNewConstMetric(xdsReconnectsDesc, prometheus.CounterValue, float64(s.Reconnects))
	for typ, v := range s.Versions {
		ch <- prometheus.MustNewConstMetric(xdsVersionDesc, prometheus.GaugeValue, 1, typ, v)
	}
	if n := s.LastNack; n != nil {
		ch <- prometheus.MustNewConstMetric(xdsLastNackDesc, prometheus.GaugeValue, float64(n.At.UnixNano())/1e9, n.Type)
	}
}

// collectors publish the client's state on the admin /metrics.
func (f *fleet) collectors() []prometheus.Collector {
	if f == nil {
		return nil
	}
	return []prometheus.Collector{xdsCollector{f.client}}
}
