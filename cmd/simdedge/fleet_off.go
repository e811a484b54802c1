//go:build !fleet

package main

import (
	"context"
	"errors"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/simdedge/simdedge/server/config"
)

// errNoFleet is the answer to a configuration with dynamic.xds in a
// binary built without the xDS client.
var errNoFleet = errors.New("dynamic.xds: this simdedge was built without fleet support (the xDS client); build it with -tags fleet (make build FLEET=1)")

// fleet is empty without the fleet build tag: every method is a no-op on
// its nil value.
type fleet struct{}

// checkFleet refuses a configuration that needs the xDS client.
func checkFleet(cfg *config.Config) error {
	if cfg.XDS() != nil {
		return errNoFleet
	}
	return nil
}

func startFleet(_ context.Context, cfg *config.Config, _ string, _ string, _ *slog.Logger) (*fleet, error) {
	return nil, checkFleet(cfg)
}

func (f *fleet) initial(_ context.Context, cfg *config.Config) (*config.Config, error) {
	return cfg, nil
}
func (f *fleet) current(u fleetUpdate) (*config.Config, error)     { return u.cfg, nil }
func (f *fleet) updates() <-chan fleetUpdate                       { return nil }
func (f *fleet) reload(cfg *config.Config) (*config.Config, error) { return cfg, checkFleet(cfg) }
func (f *fleet) stop()                                             {}
func (f *fleet) adminConfig(b []byte) []byte                       { return b }
func (f *fleet) collectors() []prometheus.Collector                { return nil }
