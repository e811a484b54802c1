package main

import (
	"errors"
	"io"
	"log/slog"

	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/config"
)

// openRDMA opens an RDMA listener at l.Address with l.RDMA's provider,
// credits and message size.
func openRDMA(l config.Listener, log *slog.Logger) (server.MessageListener, io.Closer, error) {
	return nil, nil, errors.New("the rdma transport is not part of this build yet")
}
