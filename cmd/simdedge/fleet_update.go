package main

import "github.com/simdedge/simdedge/server/config"

// fleetUpdate is a configuration from the control plane for the serve
// loop to apply (running.applyConfig); the outcome goes back on reply,
// and from there to the control plane as an ACK or a NACK.
type fleetUpdate struct {
	cfg *config.Config
	// endpointsOnly: cfg differs from the running configuration only in
	// upstream targets (running.applyEndpoints).
	endpointsOnly bool
	reply         chan error
}
