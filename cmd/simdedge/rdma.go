package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"strconv"

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
// credits and message size.
func openRDMA(l config.Listener, log *slog.Logger) (server.MessageListener, io.Closer, error) {
	cfg := rdma.ListenConfig{Address: l.Address}
	if r := l.RDMA; r != nil {
		cfg.Provider, cfg.Credits, cfg.MessageSize = r.Provider, r.Credits, r.MessageSize
	}
	ml, err := rdma.ListenMessages(cfg)
	if errors.Is(err, rdma.ErrNotSupported) {
		return nil, nil, errNoRDMA
	}
	if err != nil {
		return nil, nil, err
	}
	log.Info("rdma listener", "addr", ml.Addr().String(), "provider", cfg.Provider)
	return ml, ml, nil
}

// rdmaTarget turns "rdma://host:port?provider=tcp&credits=32&message_size=65536&local=10.0.0.1"
// into a target that connects on first use; local names the local address
// (interface) to dial from.
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
		default:
			return nil, errors.New("unknown rdma target option (known: provider, credits, message_size, local)")
		}
	}
	if !rdma.Supported() {
		return nil, errNoRDMA
	}
	return rdma.NewTarget(u.Host, o), nil
}
