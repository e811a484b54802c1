package config

import (
	"strings"

	"github.com/simdedge/simdedge/server/proxy"
	"go.yaml.in/yaml/v3"
)

// untrusted_forwarding (top level, beside trusted_proxies) is what proxy
// routes do with the X-Real-IP and Forwarded fields a client sends
// (proxy.Forwarding, server/proxy/forwarded.go):
//
//	trusted_proxies: ["10.0.0.0/8"]
//	untrusted_forwarding: drop   # drop (default) | overwrite | pass
//
// drop removes both from peers outside trusted_proxies; overwrite writes
// the edge's own on every request (X-Real-IP the client address,
// Forwarded this hop's element after a trusted peer's); pass forwards
// them as received. X-Forwarded-For is rebuilt for untrusted peers
// whatever this says. A route's request_headers may set or add them only
// with pass: the other modes would drop or replace the edit. A reload
// applies a change to the requests that follow.

// Values of untrusted_forwarding.
const (
	ForwardingDrop      = "drop"
	ForwardingOverwrite = "overwrite"
	ForwardingPass      = "pass"
)

// DefaultUntrustedForwarding: a client's value never reaches the
// upstream, and requests that carry neither field gain no bytes.
const DefaultUntrustedForwarding = ForwardingDrop

func (d *decoder) untrustedForwarding(dst *string) func(*yaml.Node, string) {
	return func(v *yaml.Node, key string) {
		d.str(dst)(v, key)
		if _, ok := forwardingModes[*dst]; !ok {
			d.fail(v, key, `must be "drop", "overwrite" or "pass"`)
		}
	}
}

var forwardingModes = map[string]proxy.Forwarding{
	ForwardingDrop:      proxy.ForwardingDrop,
	ForwardingOverwrite: proxy.ForwardingOverwrite,
	ForwardingPass:      proxy.ForwardingPass,
}

// forwarding is untrusted_forwarding for proxy.Options.
func (c *Config) forwarding() proxy.Forwarding {
	return forwardingModes[c.UntrustedForwarding] // "" is the default, drop (0)
}

// validateForwarding refuses a route's request_headers edit of X-Real-IP
// or Forwarded that untrusted_forwarding would drop or replace.
func (c *Config) validateForwarding(d *decoder, key string, r *Route, at *yaml.Node) {
	if c.UntrustedForwarding == ForwardingPass || r.RequestHeaders == nil || d.failedWithin("untrusted_forwarding") {
		return
	}
	for _, fs := range []Fields{r.RequestHeaders.Set, r.RequestHeaders.Add} {
		for _, f := range fs {
			for _, name := range []string{"X-Real-IP", "Forwarded"} {
				if strings.EqualFold(f.Name, name) {
					d.fail(at, key+".request_headers", name+" is written by untrusted_forwarding; set untrusted_forwarding: pass to edit it here")
				}
			}
		}
	}
}
