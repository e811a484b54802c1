package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"strconv"
	"time"

	"github.com/simdedge/simdedge/rdma"
	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/config"
	"github.com/simdedge/simdedge/server/proxy"
)

// targetSchemes resolves upstream targets written as URLs
// (config.BuildOptions.Schemes).
var targetSchemes = map[string]func(*url.URL) (proxy.MessageTarget, error){
	"rdma": rdmaTarget,
}

// errNoRDMA explains ErrNotSupported to an operator.
var errNoRDMA = errors.New("this simdedge was built without RDMA support (rebuild with -tags rdma and cgo; needs libfabric-dev)")

// openRDMA opens an RDMA listener at l.Address with l.RDMA's provider,
// credits, message size and poll mode.
func openRDMA(l config.Listener, log *slog.Logger) (server.MessageListener, io.Closer, error) {
	cfg := rdma.ListenConfig{Address: l.Address}
	if r := l.RDMA; r != nil {
		cfg.Provider, cfg.Credits, cfg.MessageSize = r.Provider, r.Credits, r.MessageSize
		poll, err := rdma.ParsePollMode(r.Poll)
		if err != nil {
			return nil, nil, err
		}
		cfg.Poll, cfg.Spin = poll, time.Duration(r.Spin)
	}
	ml, err := rdma.ListenMessages(cfg)
	if errors.Is(err, rdma.ErrNotSupported) {
		return nil, nil, errNoRDMA
	}
	if err != nil {
		return nil, nil, err
	}
	log.Info("rdma listener", "addr", ml.Addr().String(), "provider", cfg.Provider, "poll", cfg.Poll.String())
	unstat := addTransport(rdmaStats(ml, ml.Addr().String()))
	return ml, closerFunc(func() error { unstat(); return ml.Close() }), nil
}

// rdmaTarget turns "rdma://host:port?provider=tcp&credits=32&message_size=65536&local=10.0.0.1&poll=busy&spin=100us"
// into a target that connects on first use; local names the local address
// (interface) to dial from, poll and spin how the client waits for
// completions (rdma.PollMode; spin only with poll=busy).
func rdmaTarget(u *url.URL) (proxy.MessageTarget, error) {
	var o rdma.DialOptions
	for k, vs := range u.Query() {
		v := vs[len(vs)-1]
		switch k {
		case "provider":
			o.Provider = v
		case "local":
			o.Local = v
		case "credits", "message_size":
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return nil, fmt.Errorf("rdma target option %s must be a positive integer", k)
			}
			if k == "credits" {
				o.Credits = n
			} else {
				o.MessageSize = n
			}
		case "poll":
			m, err := rdma.ParsePollMode(v)
			if err != nil {
				return nil, errors.New(`rdma target option poll must be "block" or "busy"`)
			}
			o.Poll = m
		case "spin":
			d, err := time.ParseDuration(v)
			if err != nil || d < time.Microsecond || d > rdma.MaxSpin {
				return nil, fmt.Errorf("rdma target option spin must be a duration from 1us to %v", rdma.MaxSpin)
			}
			o.Spin = d
		default:
			return nil, errors.New("unknown rdma target option (known: provider, credits, message_size, local, poll, spin)")
		}
	}
	if o.Spin != 0 && o.Poll != rdma.PollBusy {
		return nil, errors.New("rdma target option spin needs poll=busy")
	}
	if !rdma.Supported() {
		return nil, errNoRDMA
	}
	return rdma.NewTarget(u.Host, o), nil
}
