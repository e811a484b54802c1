package main

// routeDocs: routes[]: matching, the actions, gatekeeping and rewriting.
var routeDocs = map[string]doc{
	"routes": {
		Text: "The routing table: the first route in order whose `match` accepts a request serves it (a request no route " +
			"matches is answered 404). A route has exactly one action: `respond`, `echo`, `handler`, `proxy`, `redirect` or " +
			"`files`; the other keys gate, rewrite or compress around it. A reload swaps the whole table atomically: requests in " +
			"flight finish on the table they started with.",
		Syntax:   "[{match: {...}, ACTION: {...}, ...}, ...]",
		Required: true,
		Default:  "- (at least one route)",
		Reload:   reloadYes,
		Example: "routes:\n  - name: health\n    match: {path: /healthz, methods: [GET, HEAD]}\n" +
			"    respond: {status: 200, body: \"ok\\n\", headers: {Content-Type: text/plain}}\n" +
			"  - name: debug-echo\n    match: {path_prefix: /echo, query: {debug: \"1\"}}\n    echo: {}\n",
	},
	"routes[].name": {Text: "A name for logs, metrics and `simdedge check`'s output.", Default: "-"},
	"routes[].match": {
		Text:    "What the route accepts; every key given must match, and an empty or absent `match` accepts every request.",
		Default: "- (every request)",
		Example: "routes:\n  - match:\n      host: \"*.example.com\"\n      path_prefix: /api/\n      methods: [GET, POST]\n" +
			"      headers: {X-Tenant: blue, X-Env: {prefix: prod}, X-Id: {regex: \"^[0-9]+$\"}, X-Beta: {present: true}}\n" +
			"      query: {format: json}\n    respond: {status: 204}\n" +
			"  - match: {host: example.com, path: /}\n    respond: {status: 200, body: \"home\\n\"}\n" +
			"  - match: {path_regex: \"^/v([0-9]+)/items/\"}\n    respond: {status: 200}\n",
	},
	"routes[].match.host": {
		Text: "An exact host name, or `*.suffix`, which matches every name under the suffix (`*.example.com` matches " +
			"`a.example.com` and `a.b.example.com`, not `example.com`). Compared without case, port or trailing dot with the " +
			"Host field (or an absolute-form target's authority).",
		Syntax:  "NAME | *.SUFFIX",
		Default: "- (any host)",
	},
	"routes[].match.path": {
		Text:    "The path exactly, after path normalisation, without the query. Exclusive with `path_prefix`; must start with `/`.",
		Syntax:  "PATH",
		Default: "- (any path)",
	},
	"routes[].match.path_prefix": {
		Text: "Paths that start with it, byte-wise as nginx's prefix locations: `/api` also matches `/apis`; write `/api/` " +
			"to mean the directory. Must start with `/`.",
		Syntax:  "PATH",
		Default: "- (any path)",
	},
	"routes[].match.methods": {
		Text:    "Accepted methods, case-sensitive (`GET`, not `get`).",
		Syntax:  "[METHOD, ...]",
		Default: "- (any method)",
	},
	"routes[].match.path_regex": {
		Text:    "An RE2 regular expression the path must match (unanchored: write `^` and `$`); its groups are the captures `{1}`, `{2}`... of the route's templates.",
		Syntax:  "REGEX",
		Default: "-",
	},
	"routes[].match.headers": {
		Text: "Header fields that must match: `NAME: VALUE` (exact), or `NAME: {exact: V}`, `{prefix: P}`, `{regex: RE}`, " +
			"`{present: true|false}`. Names without case.",
		Default: "-",
	},
	"routes[].match.query": {Text: "Query parameters that must have these values (form-decoded; any occurrence of a repeated key).", Syntax: "{NAME: VALUE, ...}", Default: "-"},
	"routes[].respond": {
		Text:    "Action: a fixed response.",
		Default: "-",
		Example: "routes:\n  - match: {path: /robots.txt}\n    respond:\n      status: 200\n      body: \"User-agent: *\\nDisallow: /admin/\\n\"\n" +
			"      headers: {Content-Type: text/plain, Cache-Control: \"max-age=86400\"}\n",
	},
	"routes[].respond.status":  {Text: "Status code, 200-999.", Required: true, Default: "-", Range: [2]int64{200, 999}},
	"routes[].respond.body":    {Text: "Body, sent as written.", Default: "- (empty)"},
	"routes[].respond.headers": {Text: "Header fields of the response.", Syntax: "{NAME: VALUE, ...}", Default: "-"},
	"routes[].echo": {
		Text:    "Action: answer with JSON describing the request as the edge parsed it (method, target, path, query, headers), after the route's rewrites. For debugging; it has no keys.",
		Syntax:  "{}",
		Default: "-",
	},
	"routes[].handler": {
		Text: "Action: a Go handler registered by name, for programs that embed simdedge (`config.BuildOptions.Handlers`); " +
			"the `simdedge` binary registers none.",
		Syntax:  "NAME",
		Default: "-",
		Example: "# Only for a program that registers \"metrics\" in config.BuildOptions.Handlers.\nroutes:\n  - match: {path: /internal/metrics}\n    handler: metrics\n",
	},
	"routes[].proxy": {
		Text:    "Action: forward to an upstream.",
		Default: "-",
		Example: "upstreams:\n  - {name: app, targets: [\"127.0.0.1:3000\"]}\nroutes:\n  - match: {path_prefix: /ws/}\n" +
			"    proxy: {upstream: app, upgrades: [websocket]}\n  - proxy: {upstream: app}\n",
	},
	"routes[].proxy.upstream": {Text: "Name of an entry of `upstreams`.", Syntax: "NAME", Required: true, Default: "-"},
	"routes[].proxy.upgrades": {
		Text: "Upgrade protocols allowed through (RFC 9110 §7.8; names without case and version); `[]` allows none. " +
			"An upgrade to a protocol not listed is answered 403. The tunnel after a 101 ends after `timeouts.tunnel_idle` idle.",
		Syntax: "[PROTOCOL, ...]",
	},
	"routes[].normalize_path": {
		Text:    "`false` forwards the path as the client sent it; the route was still matched on the normalised path.",
		Default: "true",
		Example: "upstreams:\n  - {name: legacy, targets: [\"127.0.0.1:9002\"]}\nroutes:\n  - match: {path_prefix: /legacy/}\n    normalize_path: false\n    proxy: {upstream: legacy}\n",
	},
	"routes[].hsts": {
		Text:    "Send `Strict-Transport-Security` on this route's responses over TLS (never over plain HTTP, RFC 6797 §7.2).",
		Default: "- (not sent)",
		Example: "routes:\n  - hsts: {max_age: 31536000, include_subdomains: true, preload: true}\n    respond: {status: 200}\n",
	},
	"routes[].hsts.max_age": {Text: "Seconds (0-315360000); 0 tells clients to forget the policy.", Required: true, Default: "-", Range: [2]int64{0, 315360000},
		Example: "# Withdraw an HSTS policy sent before: clients forget it.\nroutes:\n  - hsts: {max_age: 0}\n    respond: {status: 200}\n"},
	"routes[].hsts.include_subdomains": {Text: "Add `includeSubDomains`."},
	"routes[].hsts.preload":            {Text: "Add `preload`; needs `include_subdomains` and a `max_age` of at least 31536000 (the preload list's rule)."},
	"routes[].allow": {
		Text:    "If set, only these client addresses or CIDR prefixes may use the route; others get 403. `deny` wins over `allow`. The client address is the peer's, or what `trusted_proxies` vouch for.",
		Syntax:  "[CIDR, ...]",
		Default: "- (everyone)",
		Example: "routes:\n  - match: {path_prefix: /internal/}\n    allow: [\"10.0.0.0/8\", \"192.168.0.0/16\"]\n    deny: [\"10.0.66.0/24\"]\n    respond: {status: 200}\n",
	},
	"routes[].deny": {Text: "Client addresses or CIDR prefixes refused with 403.", Syntax: "[CIDR, ...]", Default: "- (no one)"},
	"routes[].rate_limit": {
		Text:    "A token bucket per key: `rate` requests per second with bursts of `burst`; beyond it 429 with `Retry-After`. Limits are per simdedge instance (N instances let N times the rate through), and a reload starts every bucket full.",
		Default: "- (no limit)",
		Example: "routes:\n  - match: {path_prefix: /api/}\n    rate_limit: {key: \"header:X-Api-Key\", rate: 50, burst: 100, max_keys: 100000}\n    respond: {status: 200}\n",
	},
	"routes[].rate_limit.key": {
		Text:   "What is counted: the client address, or a header's value (a request without the header is counted by its client address).",
		Syntax: "client_ip | header:NAME",
	},
	"routes[].rate_limit.rate":     {Text: "Requests per second, more than 0 (fractions allowed: 0.5 is one every two seconds). Required unless `service` is given.", Default: "- (no local limit with `service`)"},
	"routes[].rate_limit.burst":    {Text: "Requests allowed at once above the rate.", Default: "`rate` rounded up, at least 1"},
	"routes[].rate_limit.max_keys": {Text: "Keys tracked at once; the least recently seen are forgotten beyond it, which bounds memory."},
	"routes[].rate_limit.service": {
		Text: "A global limit shared by every instance, kept by a service that speaks Envoy's rate-limit protocol " +
			"(`envoy.service.ratelimit.v3`, such as github.com/envoyproxy/ratelimit with Redis). Checked after the local limit " +
			"and before `basic_auth` and `forward_auth`; over the limit the answer is 429 with `Retry-After` from the service. " +
			"Each such request costs a round trip and runs on a goroutine on every engine (the event loop hands it off). " +
			"Needs a simdedge built with `-tags fleet`; any other refuses the file (`simdedge check` says so). " +
			"Without `rate` only this limit applies.",
		Default: "- (none)",
		Example: "routes:\n  - match: {path_prefix: /api/}\n    rate_limit:\n      rate: 100\n      service:\n        address: \"10.0.0.9:8081\"\n" +
			"        domain: edge\n        descriptors:\n          - entries: [{key: remote_address, value: \"{client_ip}\"}]\n" +
			"          - entries: [{key: host, value: \"{host}\"}, {key: path, value: \"{path}\"}]\n" +
			"        failure_mode: allow\n        timeout: 20ms\n    respond: {status: 200}\n",
	},
	"routes[].rate_limit.service.address":                     {Text: "The service's gRPC address (plaintext).", Syntax: "HOST:PORT", Required: true, Default: "-"},
	"routes[].rate_limit.service.domain":                      {Text: "The domain of the service's configuration that these descriptors are looked up in.", Required: true, Default: "-"},
	"routes[].rate_limit.service.descriptors":                 {Text: "Descriptors sent with each request (at most 16); the service counts each against the limit its configuration gives it, and the request is refused if any is over.", Syntax: "[{entries: [{key: KEY, value: TEMPLATE}, ...]}, ...]", Required: true, Default: "-"},
	"routes[].rate_limit.service.descriptors[].entries":       {Text: "The descriptor's entries, 1-16, in order.", Required: true, Default: "-"},
	"routes[].rate_limit.service.descriptors[].entries[].key": {Text: "The entry's key, as the service's configuration names it.", Required: true, Default: "-"},
	"routes[].rate_limit.service.descriptors[].entries[].value": {
		Text: "The entry's value: a template with the variables of header templates (`{client_ip}`, `{remote_addr}`, `{host}`, `{scheme}`, " +
			"`{path}`, `{query}`, `{uri}`, `{request_id}`; no captures), after the route's rewrite. A descriptor one of whose values " +
			"expands empty is not sent; values are cut at 1024 bytes.",
		Syntax: "TEMPLATE", Required: true, Default: "-",
	},
	"routes[].rate_limit.service.failure_mode": {Text: "When the service fails or does not answer in time: `allow` the request, or `deny` it with 500 (Envoy's `status_on_error`).", Values: []string{"allow", "deny"},
		Example: "routes:\n  - rate_limit:\n      service:\n        address: \"10.0.0.9:8081\"\n        domain: edge\n" +
			"        descriptors: [{entries: [{key: host, value: \"{host}\"}]}]\n        failure_mode: deny\n    respond: {status: 200}\n"},
	"routes[].rate_limit.service.timeout": {Text: "Bound on one call to the service (Envoy's default); past it the failure mode applies."},
	"routes[].basic_auth": {
		Text:    "HTTP Basic authentication (RFC 7617): a request without valid credentials is answered 401. Use it over TLS only.",
		Default: "-",
		Example: "routes:\n  - match: {path_prefix: /admin/}\n    basic_auth:\n      realm: admin\n      users:\n" +
			"        alice: \"$2a$10$z08W2nNfL4DbsuBaqpl0XOZXeV9.jN/rWb/OanWHwVh.ajDxcfOpC\"\n    respond: {status: 200}\n",
	},
	"routes[].basic_auth.realm": {Text: "Realm sent in `WWW-Authenticate`."},
	"routes[].basic_auth.users": {Text: "User names and their bcrypt hashes (`$2a$`, `$2b$` or `$2y$`; `htpasswd -nbBC 10 USER PASSWORD` makes one).", Syntax: "{NAME: BCRYPT_HASH, ...}", Required: true, Default: "-"},
	"routes[].forward_auth": {
		Text: "Ask an authentication service first (as Traefik's forwardAuth and nginx's auth_request): a 2xx lets the request " +
			"through, with `copy_headers` copied from the answer; any other answer is sent to the client as it is.",
		Default: "-",
		Example: "routes:\n  - match: {path_prefix: /app/}\n    forward_auth: {url: \"http://127.0.0.1:9100/auth\", copy_headers: [X-User, X-Groups], timeout: 2s}\n    respond: {status: 200}\n",
	},
	"routes[].forward_auth.url":          {Text: "http or https URL of the service. It gets a GET with the client's fields (Authorization and Cookie included) and `X-Forwarded-Method`, `-Uri`, `-Host`, `-Proto` and `-For`; redirects are not followed.", Syntax: "URL", Required: true, Default: "-"},
	"routes[].forward_auth.copy_headers": {Text: "Fields of the service's 2xx answer copied onto the request, replacing (or removing) what the client sent, so a client cannot forge them.", Syntax: "[NAME, ...]", Default: "-"},
	"routes[].forward_auth.timeout":      {Text: "Time the service has to answer; beyond it the request is answered 504 (502 when it cannot be reached)."},
	"routes[].rewrite": {
		Text:    "Rewrite the path before the action: exactly one of `strip_prefix`, `replace_prefix` and `regex`.",
		Default: "-",
		Example: "upstreams:\n  - {name: api, targets: [\"127.0.0.1:9001\"]}\nroutes:\n" +
			"  - match: {path_prefix: /api/}\n    rewrite: {strip_prefix: /api}\n    proxy: {upstream: api}\n" +
			"  - match: {path_prefix: /old/}\n    rewrite: {replace_prefix: {from: /old/, to: /new/}}\n    proxy: {upstream: api}\n" +
			"  - match: {path_regex: \"^/users/([0-9]+)$\"}\n    rewrite: {regex: {match: \"^/users/([0-9]+)$\", to: \"/v2/users/{1}\"}}\n    proxy: {upstream: api}\n",
	},
	"routes[].rewrite.strip_prefix":        {Text: "Remove this prefix from the path (what remains keeps a leading `/`).", Syntax: "PATH", Default: "-"},
	"routes[].rewrite.replace_prefix":      {Text: "Replace a prefix with another.", Default: "-"},
	"routes[].rewrite.replace_prefix.from": {Text: "Prefix to replace.", Syntax: "PATH", Required: true},
	"routes[].rewrite.replace_prefix.to":   {Text: "Its replacement.", Syntax: "PATH", Required: true},
	"routes[].rewrite.regex":               {Text: "Replace the first match of a regular expression.", Default: "-"},
	"routes[].rewrite.regex.match":         {Text: "RE2 regular expression; its groups are `{1}`, `{2}`... in `to`.", Syntax: "REGEX", Required: true},
	"routes[].rewrite.regex.to":            {Text: "Replacement template.", Syntax: "TEMPLATE", Required: true},
	"routes[].request_headers": {
		Text: "Edit the request's header fields before the action: `set` replaces, `add` appends, `remove` deletes. Values are " +
			"templates: `{client_ip}`, `{remote_addr}`, `{host}`, `{scheme}`, `{request_id}`, `{path}`, `{query}`, `{uri}` and " +
			"the captures `{0}`..`{99}` of `match.path_regex` (`{{` is a literal brace).",
		Default: "-",
		Example: "routes:\n  - match: {path_regex: \"^/v([0-9]+)/\"}\n    request_headers:\n" +
			"      set: {X-Client: \"{client_ip}\", X-Request-Id: \"{request_id}\"}\n      add: {X-Api-Version: \"{1}\"}\n      remove: [X-Debug]\n" +
			"    response_headers:\n      set: {X-Frame-Options: DENY}\n      add: {Vary: Accept-Encoding}\n      remove: [Server, X-Powered-By]\n" +
			"    respond: {status: 200}\n",
	},
	"routes[].request_headers.set":     {Text: "Fields set, replacing any the request has.", Syntax: "{NAME: TEMPLATE, ...}", Default: "-"},
	"routes[].request_headers.add":     {Text: "Fields added beside those the request has.", Syntax: "{NAME: TEMPLATE, ...}", Default: "-"},
	"routes[].request_headers.remove":  {Text: "Fields removed.", Syntax: "[NAME, ...]", Default: "-"},
	"routes[].response_headers":        {Text: "Edit the response's header fields, as `request_headers` does the request's.", Default: "-"},
	"routes[].response_headers.set":    {Text: "Fields set, replacing any the response has.", Syntax: "{NAME: TEMPLATE, ...}", Default: "-"},
	"routes[].response_headers.add":    {Text: "Fields added.", Syntax: "{NAME: TEMPLATE, ...}", Default: "-"},
	"routes[].response_headers.remove": {Text: "Fields removed.", Syntax: "[NAME, ...]", Default: "-"},
	"routes[].redirect": {
		Text:    "Action: answer with a redirect to a template.",
		Default: "-",
		Example: "routes:\n  - match: {host: www.example.com}\n    redirect: {to: \"https://example.com{uri}\", status: 301}\n",
	},
	"routes[].redirect.to":     {Text: "Location, a template (see `request_headers`).", Syntax: "TEMPLATE", Required: true, Default: "-"},
	"routes[].redirect.status": {Text: "301 and 308 are permanent, 302, 303 and 307 temporary; 307 and 308 keep the method and body.", Values: []string{"301", "302", "303", "307", "308"}, Default: "308"},
	"routes[].files": {
		Text: "Action: serve static files. The whole request path is looked up under `root` (nginx's `root`; " +
			"`rewrite.strip_prefix` removes a prefix first): GET and HEAD, ETag and Last-Modified with conditional requests, single byte ranges, sendfile; a directory is answered with its index file, never a listing.",
		Default: "-",
		Example: "routes:\n  - match: {path_prefix: /}\n    files: {root: /srv/www, index: index.html, follow_symlinks: false}\n",
	},
	"routes[].files.root":            {Text: "Directory served; it must exist when the configuration is loaded.", Syntax: "DIRECTORY", Required: true, Default: "-"},
	"routes[].files.index":           {Text: "File served for a directory's path.", Syntax: "NAME"},
	"routes[].files.follow_symlinks": {Text: "Let symbolic links lead out of `root`; otherwise such a path is answered 404."},
	"routes[].compress": {
		Text: "Compress responses of this route (any action, both proxy paths) for clients that accept it. `compress: {}` " +
			"takes every default. br is opt-in: its pure-Go encoder costs several times gzip's CPU.",
		Default: "- (off)",
		Example: "routes:\n  - compress: {encodings: [zstd, br, gzip], min_length: 1024, types: [text/*, application/json], levels: {gzip: 6, br: 5}}\n" +
			"    respond: {status: 200, body: \"hello\"}\n",
	},
	"routes[].compress.encodings":  {Text: "Encodings offered, in the server's order of preference.", Syntax: "[zstd | br | gzip, ...]", Values: []string{"zstd", "br", "gzip"}},
	"routes[].compress.min_length": {Text: "Smallest response compressed, in bytes (at most 32768); smaller ones gain little.", Range: [2]int64{0, 32768}},
	"routes[].compress.types":      {Text: "Media types compressed; `text/*` covers a whole type.", Syntax: "[MEDIA_TYPE, ...]"},
	"routes[].compress.levels":     {Text: "Level per encoding (gzip 1-9, br 0-11, zstd 1-22).", Syntax: "{ENCODING: LEVEL, ...}"},
}
