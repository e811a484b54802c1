package main

// upstreamDocs: upstreams[] (server/upstream's pools and policies).
var upstreamDocs = map[string]doc{
	"upstreams": {
		Text: "Named pools of targets that `proxy` routes forward to, with the policies that choose among them: " +
			"balancing, active and passive health, retries, timeouts and connection caps. A reload keeps the health " +
			"state and idle connections of the targets that remain in an upstream of the same name.",
		Syntax: "[{name: ..., targets: [...], ...}, ...]",
		Reload: reloadYes,
		Example: "upstreams:\n  - name: api\n    targets:\n      - \"10.0.1.10:8080\"\n      - {address: \"10.0.1.11:8080\", weight: 3}\n" +
			"    balance: least_conn\n    max_conns_per_target: 256\n    queue: {size: 512, timeout: 2s}\n" +
			"    send_proxy_protocol: v2\n" +
			"  - name: demo\n    builtin: demo\n" +
			"routes:\n  - match: {path_prefix: /api/}\n    proxy: {upstream: api}\n  - proxy: {upstream: demo}\n",
	},
	"upstreams[].name": {Text: "Name that routes' `proxy.upstream` refers to; unique.", Required: true, Default: "-"},
	"upstreams[].targets": {
		Text: "Targets: `host:port` or `http://host:port` (HTTP/1.1), `https://host:port` (HTTP/1.1 over TLS, see `tls`), " +
			"`h2c://host:port` (HTTP/2 with prior knowledge, as gRPC servers speak), `h2://host:port` (HTTP/2 over TLS), or " +
			"`rdma://host:port?provider=verbs&credits=32&message_size=65536&local=ADDR&poll=busy&spin=100us` (an RDMA backend; " +
			"needs a binary built with `-tags rdma`). An upstream's targets are all HTTP/2 or none. A target is written plain or " +
			"as `{address, weight}`. An upstream has `targets` or `builtin`.",
		Syntax:  "[ADDRESS | {address: ADDRESS, weight: INTEGER}, ...]",
		Default: "-",
	},
	"upstreams[].targets[].address": {Text: "The target's address, as above.", Syntax: "ADDRESS", Required: true},
	"upstreams[].targets[].weight":  {Text: "Relative weight for `round_robin`, `least_conn`, `p2c`, `random` and `hash`.", Default: "1"},
	"upstreams[].builtin": {
		Text:    "Targets that the program supplies when it starts, instead of `targets`: the `simdedge` binary knows `demo`, a small echo server on a loopback port of its own.",
		Syntax:  "NAME",
		Default: "-",
	},
	"upstreams[].balance": {
		Text: "How a target is chosen: `round_robin` (weighted, smooth), `least_conn` (fewest requests in flight, weighted), " +
			"`p2c` (power of two random choices by load), `random` (weighted), `hash` (consistent hashing of `hash.key`, for affinity).",
		Values: []string{"round_robin", "least_conn", "p2c", "random", "hash"},
		Example: "upstreams:\n  - name: sessions\n    targets: [\"10.0.2.10:8080\", \"10.0.2.11:8080\", \"10.0.2.12:8080\"]\n" +
			"    balance: hash\n    hash: {key: \"cookie:session\"}\nroutes:\n  - proxy: {upstream: sessions}\n",
	},
	"upstreams[].hash": {Text: "Key of `balance: hash`, which needs it."},
	"upstreams[].hash.key": {
		Text:    "What is hashed: a header, a cookie, a query parameter, the client address or the path.",
		Syntax:  "header:NAME | cookie:NAME | query:NAME | client_ip | path",
		Default: "-",
	},
	"upstreams[].health": {
		Text: "Health of the targets: active checks (a request every `interval`) and passive outlier ejection " +
			"(consecutive failures of real requests). An unhealthy or ejected target gets no requests until it recovers.",
		Example: "upstreams:\n  - name: api\n    targets: [\"10.0.1.10:8080\", \"10.0.1.11:8080\"]\n    health:\n" +
			"      active: {path: /healthz, interval: 5s, timeout: 1s, healthy_after: 2, unhealthy_after: 3, expect: \"200-399\"}\n" +
			"      passive: {consecutive_failures: 5, eject_for: 30s, max_ejected: 50%}\n" +
			"routes:\n  - proxy: {upstream: api}\n",
	},
	"upstreams[].health.active": {
		Text:    "Active checks: a GET of `path` on every target every `interval`. They run only when this section is given.",
		Default: "- (off)",
	},
	"upstreams[].health.active.path":            {Text: "Origin-form path requested.", Syntax: "PATH"},
	"upstreams[].health.active.interval":        {Text: "Time between checks of a target."},
	"upstreams[].health.active.timeout":         {Text: "Time a check may take (at most `interval`)."},
	"upstreams[].health.active.healthy_after":   {Text: "Consecutive passing checks that bring an unhealthy target back."},
	"upstreams[].health.active.unhealthy_after": {Text: "Consecutive failing checks that mark a target unhealthy."},
	"upstreams[].health.active.expect":          {Text: "Statuses that pass: codes and ranges of 100-599, comma-separated.", Syntax: "\"200-399\" | \"200,204\""},
	"upstreams[].health.passive": {
		Text: "Outlier ejection (Envoy's): a target that fails `consecutive_failures` requests in a row is ejected for " +
			"`eject_for`, longer at each repeat, while no more than `max_ejected` of the pool is out.",
	},
	"upstreams[].health.passive.consecutive_failures": {Text: "Failures in a row (connect errors, resets, 5xx) that eject a target; 0 turns ejection off."},
	"upstreams[].health.passive.eject_for":            {Text: "Base ejection time; it grows with each repeated ejection."},
	"upstreams[].health.passive.max_ejected":          {Text: "Largest share of the pool ejected at once (`0%` ejects nothing), written `50%` or `50`."},
	"upstreams[].retries": {
		Text: "Retry policy: a failed attempt is tried again on another target when its condition is listed in `on` and the " +
			"request can be replayed, within a budget. Connect failures fail over even with `attempts: 0`.",
		Example: "upstreams:\n  - name: api\n    targets: [\"10.0.1.10:8080\", \"10.0.1.11:8080\"]\n" +
			"    retries: {attempts: 2, on: [connect_failure, reset, timeout, 503], budget: 20%, backoff: 25ms}\n" +
			"    timeouts: {connect: 1s, response_header: 15s, try: 15s, total: 40s}\n" +
			"routes:\n  - proxy: {upstream: api}\n",
	},
	"upstreams[].retries.attempts": {Text: "Retries after the first try; 0 turns retries off."},
	"upstreams[].retries.on": {
		Text:   "Conditions retried: `connect_failure`, `reset`, `timeout`, `5xx` or a status 500-599.",
		Syntax: "[connect_failure | reset | timeout | 5xx | STATUS, ...]",
	},
	"upstreams[].retries.budget":  {Text: "Retries in flight are at most this share of the requests in flight (at least 3), so retries cannot multiply an overload (Envoy's retry budget)."},
	"upstreams[].retries.backoff": {Text: "Base delay before a retry; each retry doubles it, up to ten times the base, with jitter."},
	"upstreams[].timeouts": {
		Text: "Bounds of an exchange with a target.",
	},
	"upstreams[].timeouts.connect":         {Text: "Connecting to a target (TLS handshake included)."},
	"upstreams[].timeouts.response_header": {Text: "The response head, from the end of the request."},
	"upstreams[].timeouts.try":             {Text: "One attempt, up to its response head."},
	"upstreams[].timeouts.total":           {Text: "Every attempt and backoff of a request, up to its response head. Bodies are bounded per read, not in total, so long downloads are not cut."},
	"upstreams[].max_conns_per_target": {
		Text:    "Most connections (requests in flight) per target; 0 is no cap. Requests beyond it wait in `queue`.",
		Default: "0 (no cap)",
	},
	"upstreams[].queue": {
		Text: "Requests waiting for a target under `max_conns_per_target`.",
	},
	"upstreams[].queue.size":    {Text: "Requests that may wait; 0 answers 503 at once when every target is at its cap."},
	"upstreams[].queue.timeout": {Text: "How long a request may wait before it is answered 503."},
	"upstreams[].tls": {
		Text: "Speak TLS to the targets. An upstream is TLS when it has this section or its targets are written `https://`; " +
			"its targets are all of one kind. TLS upstreams are proxied on goroutines on every engine.",
		Example: "upstreams:\n  - name: secure\n    targets: [\"https://10.0.3.10:8443\"]\n    tls:\n" +
			"      ca: /etc/simdedge/tls/backend-ca.pem\n      server_name: backend.internal\n" +
			"      client_cert: {cert: /etc/simdedge/tls/edge-client.pem, key: /etc/simdedge/tls/edge-client.key}\n" +
			"      insecure_skip_verify: false\nroutes:\n  - proxy: {upstream: secure}\n",
	},
	"upstreams[].tls.ca":                   {Text: "PEM file of the CAs that sign the targets' certificates.", Syntax: "FILE", Default: "- (the system's roots)"},
	"upstreams[].tls.server_name":          {Text: "Name sent by SNI and verified in the targets' certificates.", Syntax: "DNS_NAME", Default: "- (each target's host)"},
	"upstreams[].tls.client_cert":          {Text: "Client certificate presented to the targets (mutual TLS).", Default: "- (none)"},
	"upstreams[].tls.client_cert.cert":     {Text: "PEM file of the certificate chain.", Syntax: "FILE", Required: true},
	"upstreams[].tls.client_cert.key":      {Text: "PEM file of the private key.", Syntax: "FILE", Required: true},
	"upstreams[].tls.insecure_skip_verify": {Text: "Do not verify the targets' certificates; a warning is logged at every start and reload."},
	"upstreams[].resolve": {
		Text: "Service discovery without a control plane: the host names of `targets` (`host:port`, `http(s)://host:port`) and " +
			"`dns+srv://NAME` targets (host, port and weight from SRV records of the lowest priority) are resolved when the " +
			"configuration is built, and again when the answer's TTL runs out, or every `interval` where the resolver gives none. " +
			"A changed answer is applied as a reload is: targets that stay keep their pooled connections and health state, those " +
			"that left drain. A failed or empty lookup keeps the last answer. Without `resolve` a host name is looked up per new " +
			"connection (and proxied on goroutines only); a `dns+srv://` target implies `resolve` with its defaults. " +
			"With TLS, `tls.server_name` is needed (the targets become addresses); not for `h2c://` or `h2://` targets.",
		Default: "- (names are not re-resolved)",
		Example: "upstreams:\n  - name: api\n    targets: [\"api.internal:8080\", \"dns+srv://_http._tcp.api.internal\"]\n" +
			"    resolve: {servers: [\"127.0.0.53:53\"], interval: 5s, respect_ttl: true, timeout: 2s, family: ipv4}\n" +
			"routes:\n  - proxy: {upstream: api}\n",
	},
	"upstreams[].resolve.servers": {
		Text:    "DNS servers asked in turn (nginx's `resolver`). Empty: the system resolver (`/etc/resolv.conf`), which gives no TTL, so `interval` applies.",
		Syntax:  "[IP:PORT, ...]",
		Default: "- (the system resolver)",
	},
	"upstreams[].resolve.interval":    {Text: "How often names are resolved again when the answer carries no TTL or `respect_ttl` is false, and how soon a failed lookup is retried (Envoy's `dns_refresh_rate`)."},
	"upstreams[].resolve.respect_ttl": {Text: "Resolve again when the answer's smallest TTL runs out (at least 1 s, at most 1 h apart) rather than every `interval` (Envoy's `respect_dns_ttl`)."},
	"upstreams[].resolve.timeout":     {Text: "Bound on one round of lookups of every name."},
	"upstreams[].resolve.family":      {Text: "Address records used: A and AAAA, A only or AAAA only (Envoy's `dns_lookup_family`).", Values: []string{"any", "ipv4", "ipv6"}},
	"upstreams[].send_proxy_protocol": {
		Text: "Send a PROXY protocol header (`v1` text or `v2` binary) naming the client connection before each request; " +
			"such upstreams get a new connection per request and are proxied on goroutines. Plain `host:port` targets only.",
		Values:  []string{"v1", "v2"},
		Default: "- (none)",
	},
}
