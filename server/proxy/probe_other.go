//go:build !linux

package proxy

import "net"

// prober is a no-op off Linux (probe_linux.go): a non-resendable request
// on a connection the upstream closed while it idled gets 502.
type prober struct{}

func newProber(net.Conn) *prober { return nil }

func (*prober) closedByPeer() bool { return false }
