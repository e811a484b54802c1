package xds

import (
	"strconv"
	"strings"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	"google.golang.org/protobuf/types/known/durationpb"
)

// clusterOut is one Cluster read: the upstream it makes (without
// targets), where its endpoints come from, and the circuit breaker's
// cluster-wide connection cap (split over the targets when they are
// known).
type clusterOut struct {
	up       Upstream
	eds      string                            // the ClusterLoadAssignment's name for EDS
	inline   *endpointv3.ClusterLoadAssignment // STATIC and DNS clusters
	maxConns int
}

// lbPolicies maps lb_policy onto balance. LEAST_REQUEST is Envoy's power
// of two choices by requests in flight, which is simdedge's p2c.
var lbPolicies = map[clusterv3.Cluster_LbPolicy]string{
	clusterv3.Cluster_ROUND_ROBIN:   "round_robin",
	clusterv3.Cluster_LEAST_REQUEST: "p2c",
	clusterv3.Cluster_RANDOM:        "random",
	clusterv3.Cluster_RING_HASH:     "hash",
	clusterv3.Cluster_MAGLEV:        "hash",
}

// readCluster maps a Cluster onto an upstream.
func readCluster(c *clusterv3.Cluster) (clusterOut, error) {
	a := at{"cluster", c.GetName()}
	var out clusterOut
	if err := a.known(c, "", "name", "type", "eds_cluster_config", "connect_timeout", "lb_policy",
		"load_assignment", "outlier_detection", "health_checks", "circuit_breakers", "alt_stat_name"); err != nil {
		return out, err
	}
	if c.GetName() == "" || strings.ContainsAny(c.GetName(), "~") || !printable(c.GetName()) {
		return out, a.invalid("name", "must be printable, without '~'")
	}
	out.up.Name, out.up.cluster = c.GetName(), c.GetName()
	switch c.GetType() {
	case clusterv3.Cluster_EDS:
		eds := c.GetEdsClusterConfig()
		if err := a.known(eds, "eds_cluster_config", "eds_config", "service_name"); err != nil {
			return out, err
		}
		if err := a.adsSource(eds.GetEdsConfig(), "eds_cluster_config.eds_config"); err != nil {
			return out, err
		}
		out.eds = c.GetName()
		if s := eds.GetServiceName(); s != "" {
			out.eds = s
		}
		if c.GetLoadAssignment() != nil {
			return out, a.refused("load_assignment (an EDS cluster's endpoints come over EDS)")
		}
	case clusterv3.Cluster_STATIC, clusterv3.Cluster_STRICT_DNS, clusterv3.Cluster_LOGICAL_DNS:
		if c.GetLoadAssignment() == nil {
			return out, a.invalid("load_assignment", "missing")
		}
		out.inline = c.GetLoadAssignment()
		if c.GetType() != clusterv3.Cluster_STATIC {
			// Host names are resolved again on their TTL, as
			// upstreams[].resolve does (its defaults).
			out.up.Resolve = &struct{}{}
		}
	default:
		return out, a.refused("type (only EDS, STATIC, STRICT_DNS and LOGICAL_DNS)")
	}
	balance, ok := lbPolicies[c.GetLbPolicy()]
	if !ok {
		return out, a.refused("lb_policy (" + c.GetLbPolicy().String() + ")")
	}
	out.up.Balance = balance
	if d := c.GetConnectTimeout(); d != nil {
		s, err := a.duration(d, "connect_timeout")
		if err != nil {
			return out, err
		}
		if s != "" {
			out.up.Timeouts = &Timeouts{Connect: s}
		}
	}
	if err := a.outlier(c.GetOutlierDetection(), &out.up); err != nil {
		return out, err
	}
	if err := a.healthChecks(c.GetHealthChecks(), &out.up); err != nil {
		return out, err
	}
	if err := a.breakers(c.GetCircuitBreakers(), &out); err != nil {
		return out, err
	}
	return out, nil
}

// printable: ASCII graphic characters only.
func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] >= 0x7f {
			return false
		}
	}
	return len(s) <= 200
}

// outlier maps consecutive 5xx ejection onto passive health. Envoy's
// interval (its sweep) has no counterpart: simdedge ejects at the
// failure that crosses the threshold.
func (a at) outlier(od *clusterv3.OutlierDetection, u *Upstream) error {
	if od == nil {
		off := 0 // Envoy ejects nothing without outlier_detection
		u.Health = &Health{Passive: &Passive{ConsecutiveFailures: &off}}
		return nil
	}
	p := "outlier_detection"
	if err := a.known(od, p, "consecutive_5xx", "base_ejection_time", "max_ejection_percent", "interval", "enforcing_consecutive_5xx"); err != nil {
		return err
	}
	ps := &Passive{}
	n := 5 // Envoy's default consecutive_5xx
	if v := od.GetConsecutive_5Xx(); v != nil {
		n = int(v.GetValue())
	}
	if e := od.GetEnforcingConsecutive_5Xx(); e != nil && e.GetValue() != 100 {
		if e.GetValue() != 0 {
			return a.refused(p + ".enforcing_consecutive_5xx (only 0 or 100)")
		}
		n = 0
	}
	ps.ConsecutiveFailures = &n
	if d := od.GetBaseEjectionTime(); d != nil {
		s, err := a.duration(d, p+".base_ejection_time")
		if err != nil {
			return err
		}
		ps.EjectFor = s
	}
	if v := od.GetMaxEjectionPercent(); v != nil {
		if v.GetValue() > 100 {
			return a.invalid(p+".max_ejection_percent", "must be 0-100")
		}
		ps.MaxEjected = strconv.Itoa(int(v.GetValue())) + "%"
	}
	if _, err := a.durationOf(od.GetInterval(), p+".interval"); err != nil {
		return err
	}
	u.Health = &Health{Passive: ps}
	return nil
}

// healthChecks maps one HTTP health check onto active checks.
func (a at) healthChecks(hcs []*corev3.HealthCheck, u *Upstream) error {
	if len(hcs) == 0 {
		return nil
	}
	if len(hcs) > 1 {
		return a.refused("health_checks (more than one)")
	}
	hc := hcs[0]
	p := "health_checks[0]"
	if err := a.known(hc, p, "timeout", "interval", "unhealthy_threshold", "healthy_threshold", "http_health_check"); err != nil {
		return err
	}
	h := hc.GetHttpHealthCheck()
	if h == nil {
		return a.refused(p + " (only http_health_check)")
	}
	if err := a.known(h, p+".http_health_check", "path", "expected_statuses"); err != nil {
		return err
	}
	act := &Active{Path: h.GetPath()}
	if act.Path == "" || act.Path[0] != '/' || !printable(act.Path) {
		return a.invalid(p+".http_health_check.path", "must be a path starting with '/'")
	}
	var err error
	if act.Interval, err = a.durationOf(hc.GetInterval(), p+".interval"); err != nil {
		return err
	}
	if act.Timeout, err = a.durationOf(hc.GetTimeout(), p+".timeout"); err != nil {
		return err
	}
	if v := hc.GetHealthyThreshold(); v != nil {
		act.HealthyAfter = int(min(v.GetValue(), 1000))
	}
	if v := hc.GetUnhealthyThreshold(); v != nil {
		act.UnhealthyAfter = int(min(v.GetValue(), 1000))
	}
	var ranges []string
	for i, r := range h.GetExpectedStatuses() {
		// Int64Range is [start, end).
		if r.GetStart() < 100 || r.GetEnd() > 600 || r.GetEnd() <= r.GetStart() {
			return a.invalid(p+".http_health_check.expected_statuses["+strconv.Itoa(i)+"]", "must be within [100, 600)")
		}
		ranges = append(ranges, strconv.FormatInt(r.GetStart(), 10)+"-"+strconv.FormatInt(r.GetEnd()-1, 10))
	}
	act.Expect = strings.Join(ranges, ",")
	if act.Expect == "" {
		act.Expect = "200" // Envoy's default, [200, 201)
	}
	if u.Health == nil {
		u.Health = &Health{}
	}
	u.Health.Active = act
	return nil
}

// durationOf is duration for an optional field ("" when unset).
func (a at) durationOf(d *durationpb.Duration, p string) (string, error) {
	if d == nil {
		return "", nil
	}
	return a.duration(d, p)
}

// breakers maps the default priority's thresholds: max_connections is
// Envoy's cap over the whole cluster and simdedge's a cap per target, so
// it is divided over the targets (rounded up) once they are known;
// max_pending_requests is the queue; retry_budget.budget_percent the
// retry budget. max_requests and max_retries have no counterpart.
func (a at) breakers(cb *clusterv3.CircuitBreakers, out *clusterOut) error {
	if cb == nil {
		return nil
	}
	if err := a.known(cb, "circuit_breakers", "thresholds"); err != nil {
		return err
	}
	for i, t := range cb.GetThresholds() {
		p := "circuit_breakers.thresholds[" + strconv.Itoa(i) + "]"
		if err := a.known(t, p, "priority", "max_connections", "max_pending_requests", "retry_budget"); err != nil {
			return err
		}
		if t.GetPriority() != corev3.RoutingPriority_DEFAULT {
			return a.refused(p + ".priority (only DEFAULT)")
		}
		if v := t.GetMaxConnections(); v != nil {
			out.maxConns = int(min(v.GetValue(), 1<<20))
		}
		if v := t.GetMaxPendingRequests(); v != nil {
			n := int(min(v.GetValue(), 1<<20))
			out.up.Queue = &Queue{Size: &n}
		}
		if rb := t.GetRetryBudget(); rb != nil {
			if err := a.known(rb, p+".retry_budget", "budget_percent"); err != nil {
				return err
			}
			if v := rb.GetBudgetPercent(); v != nil {
				if v.GetValue() < 0 || v.GetValue() > 100 {
					return a.invalid(p+".retry_budget.budget_percent", "must be 0-100")
				}
				out.up.Retries = &Retries{Budget: strconv.Itoa(int(v.GetValue())) + "%"}
			}
		}
	}
	return nil
}
