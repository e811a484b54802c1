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
	// gen is the generation of the file's static part cfg was merged
	// with, and fr the translation (an *xds.Fragment, kept as any so that
	// a build without the fleet tag links no xDS code): a reload of the
	// file in between makes the serve loop merge again (fleet.current).
	//lint:ignore U1000 read by fleet.go, which only the fleet build tag compiles
	gen int
	//lint:ignore U1000 read by fleet.go, which only the fleet build tag compiles
	fr any
}
