//go:build !fleet

package rls

import (
	"time"

	"github.com/simdedge/simdedge/server/rewrite"
)

// Enabled reports whether this binary has the client (-tags fleet).
const Enabled = false

// Client is the fleet build's rate-limit client; this build has none.
type Client struct{}

// New fails: the client is built only with -tags fleet.
func New(Options) (*Client, error) { return nil, ErrNeedsFleet }

// Limit admits (never reached: New fails).
func (c *Client) Limit(*rewrite.Env) (int, time.Duration) { return 0, 0 }
