package main

import (
	"errors"
	"slices"

	"github.com/simdedge/simdedge/server/config"
)

// errListenSeveral: -listen names one address, and which of several tcp
// listeners it should move is not for the program to guess.
var errListenSeveral = errors.New("-listen: the configuration has several tcp listeners and -listen replaces the address of the only one; change the file instead")

// overrideListen applies `serve -listen ADDR` to a configuration just
// loaded (at start and at every reload): ADDR replaces the address of
// its tcp listener, the top-level `listen` or the one tcp entry of
// `listeners`, whose other settings (engine, loops, TLS, limits) stay.
// Before, -listen set `listen`, which beside a `listeners` list adds a
// listener: the help promised an override and the server listened on the
// configured addresses as well. A configuration with no tcp listener
// (only xdp or rdma) gets a plain one on ADDR: there is nothing to
// override, and that is how a test or a quick run puts HTTP beside them.
func overrideListen(cfg *config.Config, addr string) error {
	if addr == "" {
		return nil
	}
	top := cfg.Listen != "" || len(cfg.Listeners) == 0 // EffectiveListeners' rule
	tcp, entry := 0, -1
	if top {
		tcp++
	}
	for i, l := range cfg.Listeners {
		if l.Transport == "" || l.Transport == config.TransportTCP {
			tcp++
			entry = i
		}
	}
	switch {
	case tcp > 1:
		return errListenSeveral
	case top || tcp == 0:
		cfg.Listen = addr
	default:
		// A copy: the loaded slice is the caller's.
		cfg.Listeners = slices.Clone(cfg.Listeners)
		cfg.Listeners[entry].Address = addr
	}
	return nil
}
