package proxy

import (
	"bytes"
	"testing"

	phttp "github.com/simdedge/simdedge/parse/http"
)

// FuzzUpgradeField: for any Upgrade value the server's parser lets
// through, the verdict never panics, and the field the proxy forwards
// names only allowed protocols, stays on one line and ends the head.
func FuzzUpgradeField(f *testing.F) {
	for _, s := range []string{"websocket", "WebSocket, foo/2", "h2c", " , ,websocket/13 ,", "a/b/c, /x, websocket"} {
		f.Add(s)
	}
	p := &Proxy{up: &Upstream{}, upgrades: normalizeUpgrades([]string{"websocket", "foo"})}
	f.Fuzz(func(t *testing.T, v string) {
		if len(v) == 0 || bytes.ContainsAny([]byte(v), "\r\n\x00") {
			return // rejected by the parser before any handler
		}
		head := &phttp.Request{Version: phttp.HTTP11, Upgrade: []byte(v), Body: phttp.BodyNone}
		verdict := p.upgradeOf(head)
		if verdict != upgradeTunnel {
			return
		}
		out := p.appendUpgrade([]byte("GET / HTTP/1.1\r\n\r\n"), head)
		if !bytes.HasSuffix(out, []byte("\r\nConnection: upgrade\r\n\r\n")) || bytes.Count(out, []byte("\r\n")) != 4 {
			t.Fatalf("head %q", out)
		}
		field := out[len("GET / HTTP/1.1\r\nUpgrade: ") : len(out)-len("\r\nConnection: upgrade\r\n\r\n")]
		n := 0
		eachProtocol(field, func(name []byte) {
			n++
			if !p.allowsUpgrade(name) {
				t.Fatalf("forwarded %q in %q", name, field)
			}
		})
		if n == 0 {
			t.Fatalf("tunnel verdict for %q forwards no protocol", v)
		}
	})
}
