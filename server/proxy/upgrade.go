package proxy

import (
	"errors"
	"strings"

	"github.com/simdedge/simdedge/internal/ascii"
	phttp "github.com/simdedge/simdedge/parse/http"
	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/upstream"
)

// HTTP/1.1 Upgrade through the proxy (RFC 9110 §7.8). An upgrade request
// (Connection: upgrade and an Upgrade field) to a protocol the route
// allows is forwarded with its Upgrade field; a 101 from the upstream is
// relayed to the client and the connection becomes a byte tunnel
// (server.ResponseWriter.Tunnel); any other answer is relayed as a normal
// response. An Upgrade the route does not allow is refused with 403, as
// Envoy answers an upgrade its upgrade_configs lack: silently forwarding it
// without the field (nginx's behaviour without proxy_set_header Upgrade)
// makes a WebSocket handshake fail at the backend with an answer that says
// nothing of the proxy's configuration. Two exceptions are ignored rather
// than refused (the request goes on as plain HTTP/1.1, which §7.8 allows):
// an Upgrade in an HTTP/1.0 request (§7.8: MUST ignore) and h2c alone,
// which curl --http2 sends on every plain-text request and which upgrades
// the client's hop, not the backend's.
//
// Only the goroutine path tunnels: the loop hands upgrade requests to it
// (LoopProxy returns nil for them), for loop-driven TLS connections too.

// DefaultUpgrades are the protocols a proxy route accepts in Upgrade when
// it names none: WebSocket (RFC 6455) is what browsers upgrade to; others
// (h2c to a backend, custom protocols) are opt-in.
var DefaultUpgrades = []string{"websocket"}

// upgradeVerdict is what the proxy does with an upgrade request.
type upgradeVerdict uint8

const (
	upgradeNone   upgradeVerdict = iota // no upgrade asked, or ignored
	upgradeTunnel                       // forward Upgrade, tunnel on 101
	upgradeRefuse                       // 403
)

var errUpgradeProtocol = errors.New("proxy: upstream switched to a protocol the route does not allow")

// h2cName is the protocol name of HTTP/2 over cleartext (RFC 7540 §3.2).
const h2cName = "h2c"

// normalizeUpgrades lowercases the allowed protocol names; nil means
// DefaultUpgrades.
func normalizeUpgrades(list []string) []string {
	if list == nil {
		list = DefaultUpgrades
	}
	out := make([]string, 0, len(list))
	for _, s := range list {
		out = append(out, strings.ToLower(strings.TrimSpace(s)))
	}
	return out
}

// upgradeOf decides for head. A request with a body is not tunnelled
// (the Upgrade is ignored): the switch happens after the whole request,
// and no protocol browsers use upgrades with one.
func (p *Proxy) upgradeOf(head *phttp.Request) upgradeVerdict {
	if head.Upgrade == nil || head.Version == phttp.HTTP10 {
		return upgradeNone
	}
	allowed, others := false, false
	eachProtocol(head.Upgrade, func(name []byte) {
		switch {
		case p.allowsUpgrade(name):
			allowed = true
		case !ascii.EqualFold(name, h2cName):
			others = true
		}
	})
	switch {
	case allowed && (p.up.messages || p.up.h2 != nil):
		// The targets cannot tunnel an HTTP/1.1 upgrade (rdma://
		// messages, HTTP/2 streams): refused rather than forwarded
		// as a request the backend would fail.
		return upgradeRefuse
	case allowed && head.Body == phttp.BodyNone:
		return upgradeTunnel
	case allowed:
		return upgradeNone
	case others:
		return upgradeRefuse
	}
	return upgradeNone // h2c alone
}

// allowsUpgrade reports whether the protocol name (without version) is
// one the route allows, ASCII case-insensitively (RFC 6455 §4.2.1 compares
// "websocket" so).
func (p *Proxy) allowsUpgrade(name []byte) bool {
	for _, a := range p.upgrades {
		if ascii.EqualFold(name, a) {
			return true
		}
	}
	return false
}

// eachProtocol calls f with the protocol name of each item of an Upgrade
// list ("websocket, foo/2" gives websocket and foo).
func eachProtocol(v []byte, f func(name []byte)) {
	for len(v) > 0 {
		i := 0
		for i < len(v) && v[i] != ',' {
			i++
		}
		item := ascii.TrimOWS(v[:i])
		for j := range item {
			if item[j] == '/' {
				item = item[:j]
				break
			}
		}
		if len(item) > 0 {
			f(item)
		}
		if i == len(v) {
			return
		}
		v = v[i+1:]
	}
}

// appendUpgrade reopens the head appendHead wrote (it ends with the empty
// line) and adds the Upgrade field, with the allowed protocols only, and
// "Connection: upgrade" (both hop-by-hop: appendHead dropped the client's).
func (p *Proxy) appendUpgrade(b []byte, head *phttp.Request) []byte {
	b = b[:len(b)-len("\r\n")]
	b = append(b, "Upgrade: "...)
	first := true
	v := head.Upgrade
	for len(v) > 0 {
		i := 0
		for i < len(v) && v[i] != ',' {
			i++
		}
		item := ascii.TrimOWS(v[:i])
		name := item
		for j := range name {
			if name[j] == '/' {
				name = name[:j]
				break
			}
		}
		if len(name) > 0 && p.allowsUpgrade(name) {
			if !first {
				b = append(b, ", "...)
			}
			b = append(b, item...)
			first = false
		}
		if i == len(v) {
			break
		}
		v = v[i+1:]
	}
	return append(b, "\r\nConnection: upgrade\r\n\r\n"...)
}

// refuseUpgrade answers an upgrade the route does not allow.
func (p *Proxy) refuseUpgrade(w *server.ResponseWriter) {
	p.respondError(w, 403, "upgrade not allowed\n")
}

// tunnel relays the upstream's 101 to the client and the bytes after it
// both ways (server.ResponseWriter.Tunnel), then reports the attempt to
// the policy: the target's in-flight count covers the tunnel's life, so
// least_conn and max_conns_per_target see open WebSockets.
func (p *Proxy) tunnel(w *server.ResponseWriter, a *upstream.Attempt, uc *upConn, t *target) {
	resp := &uc.resp
	ok := resp.Upgrade != nil
	if ok {
		allowed := false
		eachProtocol(resp.Upgrade, func(name []byte) { allowed = allowed || p.allowsUpgrade(name) })
		ok = allowed
	}
	if !ok {
		// RFC 9110 §15.2.2: a 101 names the protocols switched to; one
		// that names none, or one the route does not allow, is not
		// relayed.
		uc.nc.Close()
		a.End(upstream.StatusResult(502))
		p.upstreamFailed(w, t.ut, errUpgradeProtocol, false)
		w.SetClose()
		return
	}
	uc.out = p.writeResponseHead(w, resp, uc.out[:0], false)
	st, err := w.Tunnel(resp.Upgrade, uc.nc, uc.buf[uc.r:uc.w])
	if err != nil {
		uc.nc.Close()
	}
	uc.r = uc.w
	a.End(upstream.StatusResult(101))
	p.log.Debug("tunnel closed", "upstream", p.up.opts.Name, "target", t.addr,
		"to_upstream", st.ToPeer, "to_client", st.ToClient, "idle", st.Idle, "err", err)
}
