package main

// topDocs: the top-level keys and the sections that are not listeners,
// upstreams or routes.
var topDocs = map[string]doc{
	"listen": {
		Text: "Address of a plain tcp listener (kernel sockets), shorthand for an entry of `listeners`. " +
			"Without `listen` and `listeners` simdedge listens on the default. " +
			"`serve -listen ADDR` overrides it.",
		Syntax:  "HOST:PORT",
		Default: "127.0.0.1:8080 (when `listeners` is empty too)",
		Reload:  reloadYes,
		Example: "listen: \"0.0.0.0:8080\"\n",
	},
	"engine": {
		Text: "Engine of the tcp listeners that name none (and of `listen`): `loop`, an epoll event loop per listener " +
			"that answers non-blocking routes in one pass, or `goroutine`, a goroutine per connection.",
		Values:  []string{"loop", "goroutine"},
		Reload:  reloadNewListener,
		Example: "engine: goroutine\nlisten: \"127.0.0.1:8080\"\n",
	},
	"proxy_on_loop": {
		Text: "On the loop engine, proxy routes are served by the event loop itself over non-blocking upstream " +
			"connections instead of handing their connections to goroutines (it measured less CPU per proxied request). " +
			"Needs a tcp listener on engine `loop` when true.",
		Reload:  reloadNo,
		Example: "proxy_on_loop: false\n",
	},
	"limits": {
		Text:   "Request and connection limits (server.Limits).",
		Reload: reloadYes,
		Example: "limits:\n  max_header_bytes: 32768\n  max_headers: 64\n  max_body_bytes: 1048576\n" +
			"  max_conns: 20000\n  max_conns_per_ip: 200\n",
	},
	"limits.max_header_bytes": {Text: "Largest request head (request line and fields) in bytes; beyond it the answer is 431 and the connection closes."},
	"limits.max_headers":      {Text: "Most header fields a request may have; more are answered 431 and the connection closes."},
	"limits.max_body_bytes":   {Text: "Largest request body in bytes; a larger one is answered 413."},
	"limits.max_conns": {
		Text: "Most connections served at once per listener. At the limit an idle keep-alive connection is closed to admit a new one; " +
			"otherwise the accept waits for a free slot (the kernel's backlog holds the rest). " +
			"A listener's `http3` socket has slots of its own for its QUIC connections (handshakes included) and refuses a new one at the limit " +
			"(CONNECTION_REFUSED; the client can fall back to TCP).",
	},
	"limits.max_conns_per_ip": {
		Text:    "Most connections one client address may hold over every listener (an IPv6 client is its /64); a connection beyond it is closed when accepted.",
		Default: "a tenth of `max_conns`, at least min(`max_conns`, 100) (1000 with the default `max_conns`)",
	},
	"timeouts": {
		Text:   "Connection and request timeouts (server.Timeouts). A reload applies them to connections accepted after it.",
		Reload: reloadYes,
		Example: "timeouts:\n  read_header: 5s\n  idle: 2m\n  write: 30s\n  drain: 30s\n  drain_delay: 10s\n" +
			"  body_min_rate: 4096\n  body_rate_window: 10s\n  tunnel_idle: 30m\n",
	},
	"timeouts.read_header": {Text: "Time from the first byte of a request head to its end. On a new connection it bounds the wait for the first request and its head together, from the accept."},
	"timeouts.idle":        {Text: "How long a keep-alive connection may wait for its next request, and each read of a request body (a body that stalls longer is abandoned)."},
	"timeouts.write":       {Text: "Time each write of response bytes to the client may take."},
	"timeouts.drain":       {Text: "On SIGTERM or SIGINT, how long open connections get to finish their requests before they are closed."},
	"timeouts.drain_delay": {
		Text: "On SIGTERM or SIGINT, how long to go on accepting and serving before the drain (Envoy's drain time, a Kubernetes `preStop` sleep): " +
			"the admin `/ready` answers 503 from the start, HTTP/1.1 responses carry `Connection: close` and HTTP/2 connections get GOAWAY, " +
			"so load balancers and clients move away before anything is refused. 0: the drain starts at once.",
	},
	"timeouts.body_min_rate": {
		Text: "Slowest request body accepted, in bytes per second: a body may take `body_rate_window` plus a second " +
			"per `body_min_rate` bytes received (a slow upload is answered 408).",
	},
	"timeouts.body_rate_window": {Text: "Grace period of `body_min_rate`."},
	"timeouts.tunnel_idle":      {Text: "A tunnel after a 101 (WebSocket) ends after this long without a byte either way."},
	"http2": {
		Text: "HTTP/2 limits of every listener that speaks it (h2 by ALPN on TLS, `h2c` on plain ones). " +
			"The defaults follow nginx and Envoy; the `max_*` limits bound what one client can make the server hold or do.",
		Reload: reloadNo,
		Example: "http2:\n  max_concurrent_streams: 250\n  max_header_list_size: 65536\n  max_frame_size: 16384\n" +
			"  initial_stream_window: 262144\n  conn_window: 1048576\n  max_resets: 200\n  max_continuations: 8\n  max_idle_frames: 1000\n",
	},
	"http2.max_concurrent_streams": {Text: "SETTINGS_MAX_CONCURRENT_STREAMS: streams a client may have open at once (1-65536).", Range: [2]int64{1, 65536}},
	"http2.max_header_list_size":   {Text: "SETTINGS_MAX_HEADER_LIST_SIZE: largest decoded header list in bytes.", Range: [2]int64{1, 1<<31 - 1}},
	"http2.max_frame_size":         {Text: "SETTINGS_MAX_FRAME_SIZE: largest frame payload the server accepts (16384-16777215).", Range: [2]int64{16384, 16777215}},
	"http2.initial_stream_window":  {Text: "Initial flow-control window of each stream in bytes: how much of a request body a client may send ahead.", Range: [2]int64{1, 1<<31 - 1}},
	"http2.conn_window":            {Text: "Flow-control window of the whole connection in bytes (at least 65535).", Range: [2]int64{65535, 1<<31 - 1}},
	"http2.max_resets": {
		Text: "Streams a client may reset (or have refused) beyond those that completed, per connection, before the connection " +
			"ends with GOAWAY ENHANCE_YOUR_CALM (the rapid-reset attack, CVE-2023-44487).",
		Range: [2]int64{1, 1<<31 - 1},
	},
	"http2.max_continuations": {
		Text: "Most CONTINUATION frames one header block may take (1-1024); one more ends the connection with GOAWAY " +
			"ENHANCE_YOUR_CALM (the CONTINUATION flood, CVE-2024-27316).",
		Range: [2]int64{1, 1024},
	},
	"http2.max_idle_frames": {
		Text: "A connection's budget of frames that make no progress (empty DATA, empty header fragments, WINDOW_UPDATE, PING, " +
			"SETTINGS, PRIORITY, unknown frame types...); useful work refills it, and past it the connection ends with GOAWAY " +
			"ENHANCE_YOUR_CALM (the empty-frames flood, CVE-2019-9518).",
		Range: [2]int64{1, 1<<31 - 1},
	},
	"http3": {
		Text: "HTTP/3 limits of every listener with `http3: true`. QUIC's own defaults where it has them (quic-go's " +
			"100 streams and 30 s idle timeout), HTTP/2's header limit; Retry only under a flood of handshakes.",
		Reload: reloadNo,
		Example: "http3:\n  max_streams: 100\n  idle_timeout: 30s\n  max_header_bytes: 65536\n  handshake_timeout: 10s\n" +
			"  retry_threshold: 128\n  allow_0rtt: false\n  alt_svc_max_age: 24h\n",
	},
	"http3.max_streams": {
		Text: "Request streams a client may have open at once (QUIC's MAX_STREAMS, 1-65536); a stream whose handler " +
			"still runs after the client reset it keeps its slot.",
		Range: [2]int64{1, 65536},
	},
	"http3.idle_timeout":      {Text: "A QUIC connection without traffic for this long is closed."},
	"http3.max_header_bytes":  {Text: "Largest decoded request field section in bytes (SETTINGS_MAX_FIELD_SECTION_SIZE, counted as HTTP/2 counts its header list); a larger one is answered 431.", Range: [2]int64{1, 1<<31 - 1}},
	"http3.handshake_timeout": {Text: "Time a client has to complete the QUIC and TLS handshake."},
	"http3.retry_threshold": {
		Text: "Handshakes in flight on a listener beyond which a new client must first prove its address with a Retry " +
			"token (RFC 9000 §8.1.2): one more round trip for it, and a flood of Initials from spoofed addresses costs " +
			"the server one stateless packet each instead of a connection's state.",
		Range: [2]int64{1, 1 << 20},
	},
	"http3.allow_0rtt": {
		Text: "Accept early data (0-RTT) on resumed connections. Only GET, HEAD, OPTIONS and TRACE run from it (with " +
			"`Early-Data: 1` toward upstreams); any other request in early data is answered 425 Too Early (RFC 8470).",
	},
	"http3.alt_svc_max_age": {Text: "The `ma` of the Alt-Svc field the listener's HTTP/1.1 and HTTP/2 answers carry: how long clients remember that HTTP/3 is offered."},
	"admin": {
		Text: "The admin listener: `/metrics` (Prometheus), `/healthz`, `/ready`, `/config` (the effective configuration, " +
			"secrets redacted), `/upstreams`, and optionally `/debug/pprof/`. Off unless `address` is set.",
		Reload:  reloadNo,
		Example: "admin:\n  address: \"127.0.0.1:9901\"\n  pprof: false\n  public: false\n",
	},
	"admin.address": {
		Text:    "`host:port` with an IP literal or `localhost`. It must be a loopback address unless `public` is true.",
		Syntax:  "HOST:PORT",
		Default: "- (no admin listener)",
	},
	"admin.pprof":  {Text: "Serve net/http/pprof under `/debug/pprof/` (profiles cost CPU and reveal internals)."},
	"admin.public": {Text: "Allow an `address` that is not loopback: `/config` and pprof tell an attacker much, so exposing them must be written down."},
	"trusted_proxies": {
		Text: "Peers (IP addresses or CIDR prefixes) whose `X-Forwarded-For` is believed for the client address " +
			"(allow/deny, rate-limit keys, the proxy's own `X-Forwarded-For`) and who may send PROXY protocol headers.",
		Syntax:  "[CIDR, ...]",
		Default: "- (none: the client address is the peer's)",
		Reload:  reloadYes,
		Example: "trusted_proxies: [\"10.0.0.0/8\", \"192.0.2.10\"]\n",
	},
	"untrusted_forwarding": {
		Text: "What proxy routes do with the `X-Real-IP` and `Forwarded` fields a client outside `trusted_proxies` sends: " +
			"`drop` removes them, `overwrite` writes the edge's own on every request, `pass` forwards them as received. " +
			"`X-Forwarded-For` is rebuilt for untrusted peers whatever this says.",
		Values:  []string{"drop", "overwrite", "pass"},
		Reload:  reloadYes,
		Example: "untrusted_forwarding: overwrite\n",
	},
	"access_log": {
		Text:    "One line per request (server/accesslog). Without this section there is no access log.",
		Reload:  reloadNo,
		Example: "access_log:\n  path: /var/log/simdedge/access.log\n  format: combined\n  sample: 0.1\n",
	},
	"access_log.path": {
		Text:   "`stdout`, `stderr` or a file, appended to and reopened on SIGUSR1 (for logrotate).",
		Syntax: "stdout | stderr | FILE",
	},
	"access_log.format": {Text: "`json` (one object per line) or `combined` (the Apache/nginx combined format).", Values: []string{"json", "combined"}},
	"access_log.sample": {Text: "Share of requests logged, in (0, 1]."},
	"log": {
		Text: "The server's own log on standard error (start-up, reloads, drain, errors; not the access log). " +
			"Durations in it are written as Go durations (`10s`).",
		Reload:  reloadYes,
		Example: "log:\n  level: debug\n  format: text\n",
	},
	"log.level":  {Text: "Least severe level written.", Values: []string{"debug", "info", "warn", "error"}},
	"log.format": {Text: "`json` (one object per line) or `text` (`key=value` pairs).", Values: []string{"json", "text"}, Reload: reloadNo},
	"request_id": {
		Text:    "Request IDs: the field that carries them, read from the request and set on the response and the proxied request. Without this section requests get no IDs.",
		Reload:  reloadNo,
		Example: "request_id:\n  header: X-Request-Id\n  generate: true\n",
	},
	"request_id.header":   {Text: "Name of the header field."},
	"request_id.generate": {Text: "Generate an ID for a request that brings none, or an invalid one."},
	"trace": {
		Text:    "W3C trace context (`traceparent`, `tracestate`) on proxied requests.",
		Reload:  reloadNo,
		Example: "trace:\n  propagate: true\n  generate: true\n",
	},
	"trace.propagate": {Text: "Forward `traceparent` with the edge's own span ID, and `tracestate` with it; an invalid `traceparent` is dropped."},
	"trace.generate":  {Text: "Start a trace (not sampled) for a proxied request that brings no valid `traceparent`."},
	"normalize_path": {
		Text: "Normalise request paths before routes are matched: decode unreserved percent-escapes, resolve `.` and `..` " +
			"segments, and (with `merge_slashes`) merge repeated slashes, so that `/admin/../x` and `/%61dmin` cannot slip past a rule " +
			"written for `/admin`. The proxied path is the normalised one unless a route says `normalize_path: false`. " +
			"At the top level and on tcp listeners, which override the top level key by key.",
		Reload:  reloadYes,
		Example: "normalize_path: true\nmerge_slashes: true\nescaped_slashes: reject\n",
	},
	"merge_slashes": {
		Text:    "Merge repeated slashes (`//a///b` → `/a/b`) when paths are normalised; false keeps them for backends that tell them apart.",
		Reload:  reloadYes,
		Example: "merge_slashes: false\n",
	},
	"escaped_slashes": {
		Text: "What to do with `%2F` and `%5C` in a path: `keep` them escaped (they never split a segment), `reject` the request with 400, " +
			"or `unescape` them into `/` before matching.",
		Values:  []string{"keep", "reject", "unescape"},
		Reload:  reloadYes,
		Example: "escaped_slashes: reject\n",
	},
}
