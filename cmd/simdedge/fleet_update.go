package main

import "github.com/simdedge/simdedge/server/config"

// fleetUpdate is a configuration from the control plane for the serve
// loop to apply (running.applyConfig); the outcome goes back on reply,
// and from there to the control plane as an ACK or a NACK.
type fleetUpdate struct {
	cfg *config.Config
	// targets, when set instead of cfg, are new targets for upstreams of
	// the running configuration: an update of endpoints alone
	// (running.applyTargets).
	targets map[string]config.TargetUpdate
	reply   chan error
}
