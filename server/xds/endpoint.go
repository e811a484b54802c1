package xds

import (
	"slices"
	"strconv"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
)

// maxTargets bounds one cluster's endpoints (memory per update).
const maxTargets = 10000

// readEndpoints maps a ClusterLoadAssignment onto targets: the
// endpoints of the lowest priority that has a healthy one (simdedge has
// no priority levels; Envoy spills over gradually by its
// overprovisioning factor, simdedge moves when a level has none), whose
// health status is UNKNOWN, HEALTHY or DEGRADED, weighted by
// load_balancing_weight. The same address twice adds its weights.
func readEndpoints(cla *endpointv3.ClusterLoadAssignment, kind, name string) ([]Target, error) {
	a := at{kind, name}
	if err := a.known(cla, "", "cluster_name", "endpoints"); err != nil {
		return nil, err
	}
	type prio struct {
		n       uint32
		targets []Target
	}
	var levels []prio
	count := 0
	for i, le := range cla.GetEndpoints() {
		p := "endpoints[" + strconv.Itoa(i) + "]"
		if err := a.known(le, p, "lb_endpoints", "priority", "locality"); err != nil {
			return nil, err
		}
		var ts []Target
		for j, lb := range le.GetLbEndpoints() {
			if count++; count > maxTargets {
				return nil, a.invalid("endpoints", "more than "+strconv.Itoa(maxTargets)+" endpoints")
			}
			lp := p + ".lb_endpoints[" + strconv.Itoa(j) + "]"
			if err := a.known(lb, lp, "endpoint", "health_status", "load_balancing_weight"); err != nil {
				return nil, err
			}
			ep := lb.GetEndpoint()
			if err := a.known(ep, lp+".endpoint", "address", "hostname"); err != nil {
				return nil, err
			}
			addr, err := a.socketAddress(ep.GetAddress(), lp+".endpoint.address")
			if err != nil {
				return nil, err
			}
			w := 1
			if v := lb.GetLoadBalancingWeight(); v != nil {
				if v.GetValue() == 0 || v.GetValue() > 1<<16 {
					return nil, a.invalid(lp+".load_balancing_weight", "must be 1-65536")
				}
				w = int(v.GetValue())
			}
			switch lb.GetHealthStatus() {
			case corev3.HealthStatus_UNKNOWN, corev3.HealthStatus_HEALTHY, corev3.HealthStatus_DEGRADED:
				ts = append(ts, Target{Address: addr, Weight: w})
			}
		}
		levels = append(levels, prio{le.GetPriority(), ts})
	}
	slices.SortStableFunc(levels, func(x, y prio) int { return int(x.n) - int(y.n) })
	var chosen []Target
	for i := 0; i < len(levels); {
		// The endpoints of one priority may come in several localities.
		j, all := i, []Target(nil)
		for ; j < len(levels) && levels[j].n == levels[i].n; j++ {
			all = append(all, levels[j].targets...)
		}
		if len(all) > 0 {
			chosen = all
			break
		}
		i = j
	}
	return mergeTargets(chosen), nil
}

// mergeTargets adds the weights of duplicate addresses, keeping the
// first's place; a weight of 1 is left implicit.
func mergeTargets(ts []Target) []Target {
	var out []Target
	at := map[string]int{}
	for _, t := range ts {
		if i, ok := at[t.Address]; ok {
			out[i].Weight += t.Weight
			continue
		}
		at[t.Address] = len(out)
		out = append(out, t)
	}
	for i := range out {
		if out[i].Weight == 1 {
			out[i].Weight = 0
		}
	}
	return out
}
