package config

import (
	"fmt"
	"strings"

	"github.com/simdedge/simdedge/internal/ascii"
	"github.com/simdedge/simdedge/server/proxy"
	"go.yaml.in/yaml/v3"
)

// Upgrades of a proxy route (proxy.Options.Upgrades, server/proxy/upgrade.go):
//
//	routes:
//	  - match: {path_prefix: /ws}
//	    proxy: {upstream: app, upgrades: [websocket, my-proto]}
//
// Names are Upgrade protocol names (RFC 9110 §7.8), compared without case
// and without version. Absent, a proxy route allows websocket only
// (proxy.DefaultUpgrades); `upgrades: []` allows none. An upgrade to a
// protocol not listed is answered 403 (h2c alone, and HTTP/1.0 requests,
// are forwarded as plain requests instead). The tunnel after a 101 ends
// after timeouts.tunnel_idle without a byte either way.
func (d *decoder) upgrades(dst *[]string) func(*yaml.Node, string) {
	return func(v *yaml.Node, key string) {
		if v.Kind != yaml.SequenceNode {
			d.fail(v, key, "must be a list")
			return
		}
		list := []string{} // empty, not nil: "none" rather than the default
		for i, e := range v.Content {
			var s string
			k := fmt.Sprintf("%s[%d]", key, i)
			d.str(&s)(e, k)
			if !validProtocolName(s) {
				d.fail(e, k, "must be a protocol name (an HTTP token, without version)")
				continue
			}
			list = append(list, strings.ToLower(s))
		}
		*dst = list
	}
}

// validProtocolName: an RFC 9110 §5.6.2 token, the protocol-name of an
// Upgrade item.
func validProtocolName(s string) bool {
	return len(s) <= maxProtocolName && ascii.IsToken(s)
}

// maxProtocolName bounds a protocol name: registered ones (IANA's HTTP
// Upgrade Token Registry) are under 20 bytes; 64 catches a pasted value.
const maxProtocolName = 64

// routesWithUpgrades returns rs with each proxy route's upgrades filled
// with the default (proxy.DefaultUpgrades) when it names none, for the
// effective configuration `simdedge check` prints; rs is not changed.
func routesWithUpgrades(rs []Route) []Route {
	out := append([]Route(nil), rs...)
	for i := range out {
		if p := out[i].Proxy; p != nil && p.Upgrades == nil {
			cp := *p
			cp.Upgrades = append([]string(nil), proxy.DefaultUpgrades...)
			out[i].Proxy = &cp
		}
	}
	return out
}
