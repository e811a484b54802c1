package main

import (
	"errors"
	"io"
	"log/slog"

	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/config"
)

// openXDP opens an AF_XDP listener: the userspace TCP stack's stream
// listener (nil when tcp_port is 0), the datagram fast path's message
// listener (nil when udp_port is 0), and the closer that detaches the XDP
// program.
func openXDP(c config.XDP, log *slog.Logger) (server.StreamListener, server.MessageListener, io.Closer, error) {
	return nil, nil, nil, errors.New("the xdp transport is not part of this build yet")
}
