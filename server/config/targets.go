package config

import (
	"errors"
	"slices"
	"strings"

	"github.com/simdedge/simdedge/server/upstream"
)

// TargetUpdate is new targets for one upstream: an update of endpoints
// alone (xDS EDS), applied without parsing a document again.
type TargetUpdate struct {
	Targets []Target
	// MaxConnsPerTarget replaces the upstream's cap (xDS divides a
	// cluster's cap over its targets, so it follows their count).
	MaxConnsPerTarget int
}

// ErrTargets: WithTargets was given an upstream the configuration does
// not have, no target, or a target Parse would refuse.
var ErrTargets = errors.New("config: bad target update")

// WithTargets returns a copy of c in which each upstream named in m has
// m's targets, checked as Parse checks an upstream's targets; c is left
// as it is.
func (c *Config) WithTargets(m map[string]TargetUpdate) (*Config, error) {
	n := *c
	n.Upstreams = slices.Clone(c.Upstreams)
	done := 0
	for i := range n.Upstreams {
		u := &n.Upstreams[i]
		tu, ok := m[u.Name]
		if !ok {
			continue
		}
		done++
		if len(tu.Targets) == 0 || len(tu.Targets) > upstream.MaxTargets || u.Builtin != "" {
			return nil, ErrTargets
		}
		seen := map[string]bool{}
		for _, t := range tu.Targets {
			if targetProblem(t.Address) != "" || strings.Contains(t.Address, "://") || seen[t.Address] || t.Weight < 0 {
				return nil, ErrTargets
			}
			seen[t.Address] = true
		}
		u.Targets = slices.Clone(tu.Targets)
		u.MaxConnsPerTarget = tu.MaxConnsPerTarget
		// The pool's own checks (the weights' schedule), as Parse's.
		if _, err := upstream.New(u.withDefaults().PoolOptions(nil)); err != nil {
			return nil, errors.Join(ErrTargets, err)
		}
	}
	if done != len(m) {
		return nil, ErrTargets
	}
	return &n, nil
}
