package main

// listenerDocs: listeners[] and their tls, xdp and rdma sections.
var listenerDocs = map[string]doc{
	"listeners": {
		Text: "Where requests arrive: kernel tcp sockets, AF_XDP (kernel bypass: a userspace TCP stack and a " +
			"one-request-per-datagram UDP path) or RDMA queues (libfabric). `listen` adds one more tcp listener. " +
			"A reload opens the tcp listeners at new addresses and stops those whose address is gone (their connections " +
			"are served to their end); xdp and rdma listeners cannot change.",
		Syntax: "[{transport: ..., address: ..., ...}, ...]",
		Reload: reloadYes,
		Example: "listeners:\n  - address: \"0.0.0.0:80\"\n    redirect_to_https: true\n" +
			"  - address: \"0.0.0.0:443\"\n    engine: loop\n    loops: 4\n    http2: true\n" +
			"    tls: {certificates: [{cert: /etc/simdedge/tls/site.pem, key: /etc/simdedge/tls/site.key}]}\n" +
			"  - address: \"10.0.0.1:8080\"\n    h2c: true\n    proxy_protocol: true\n    allow: [\"10.0.0.0/8\"]\n" +
			"    deny: [\"10.0.66.0/24\"]\n    normalize_path: true\n    merge_slashes: false\n    escaped_slashes: reject\n",
	},
	"listeners[].transport": {
		Text:   "`tcp` (kernel sockets), `xdp` (AF_XDP, section `xdp`) or `rdma` (libfabric, section `rdma`).",
		Values: []string{"tcp", "xdp", "rdma"},
		Reload: reloadNewListener,
	},
	"listeners[].address": {
		Text: "`host:port` of a tcp or rdma listener (an xdp listener names its address in `xdp`). Port 0 picks a free port. " +
			"The address is what makes a listener the same one across a reload: a tcp listener at a new address is opened, " +
			"and one whose address is gone stops accepting while its connections are served to their end.",
		Syntax:  "HOST:PORT",
		Default: "- (required for tcp and rdma)",
		Reload:  reloadYes,
	},
	"listeners[].engine": {
		Text:    "Engine of a tcp listener: `loop` (epoll event loops) or `goroutine` (a goroutine per connection).",
		Values:  []string{"loop", "goroutine"},
		Default: "the top-level `engine` (loop)",
		Example: "listeners:\n  - address: \"0.0.0.0:8080\"\n    engine: goroutine\n",
		Reload:  reloadNewListener,
	},
	"listeners[].loops": {
		Text: "Event loops of a tcp listener on the loop engine (1-1024): that many sockets bound to the address with " +
			"SO_REUSEPORT, among which the kernel spreads connections. One per core the server may use.",
		Reload: reloadNewListener,
	},
	"listeners[].redirect_to_https": {
		Text: "Answer every request of this plain listener with 308 to the same host and path on the first TLS listener; " +
			"it also answers ACME HTTP-01 challenges. Needs a listener with `tls`.",
		Reload: reloadNewListener,
	},
	"listeners[].proxy_protocol": {
		Text: "Read a PROXY protocol header (v1 or v2, as HAProxy and cloud load balancers send) at the start of each " +
			"connection, before HTTP or TLS: it is required from peers in `trusted_proxies`, an untrusted peer that sends one " +
			"is closed, and one without is served under its own address. `max_conns_per_ip` then counts the client the header " +
			"names. tcp listeners, not with `redirect_to_https`.",
		Reload: reloadNewListener,
	},
	"listeners[].allow": {
		Text:    "If set, only these addresses or CIDR prefixes may connect; other connections are closed before anything is read. `deny` wins over `allow`. tcp listeners (and their `http3` socket, which refuses a QUIC connection at its first packet).",
		Syntax:  "[CIDR, ...]",
		Default: "- (everyone)",
		Reload:  reloadNewListener,
	},
	"listeners[].deny": {
		Text:    "Addresses or CIDR prefixes whose connections are closed before anything is read. tcp listeners (and their `http3` socket).",
		Syntax:  "[CIDR, ...]",
		Default: "- (no one)",
		Reload:  reloadNewListener,
	},
	"listeners[].h2c": {
		Text: "Serve HTTP/2 with prior knowledge (h2c) beside HTTP/1.1 on a plain tcp listener; without it an HTTP/2 " +
			"preface is answered 505.",
		Reload: reloadNewListener,
	},
	"listeners[].http2": {
		Text:    "Offer h2 by ALPN on a TLS listener; false leaves it out of the default ALPN list (an explicit `tls.alpn` is used as written).",
		Reload:  reloadYes,
		Default: "true (on TLS listeners)",
	},
	"listeners[].http3": {
		Text: "Serve HTTP/3 (QUIC) on the same address and port over UDP, with the listener's certificates, SNI, " +
			"client authentication and ACME certificates (ALPN h3); its HTTP/1.1 and HTTP/2 answers then carry " +
			"`Alt-Svc: h3=\":PORT\"; ma=...` (`http3.alt_svc_max_age`). TLS listeners only. Routes and certificates " +
			"reload with the rest; `allow` and `deny` apply to it; not with `proxy_protocol`. The limits are in `http3`. " +
			"On an xdp listener with `tls` (file certificates, no `acme`) QUIC is served on `xdp.udp_port` over AF_XDP " +
			"instead of the datagram fast path; `xdp.tcp_port` must then be 0 (the userspace TCP stack has no TLS).",
		Reload:  reloadNewListener,
		Default: "false",
		Example: "listeners:\n  - address: \"0.0.0.0:443\"\n    tls:\n      certificates:\n" +
			"        - {cert: /etc/simdedge/tls/example.com.pem, key: /etc/simdedge/tls/example.com.key}\n    http3: true\n",
	},
	"listeners[].normalize_path":  {Text: "This listener's `normalize_path`, overriding the top level (tcp listeners).", Reload: reloadYes, Default: "the top level's (true)"},
	"listeners[].merge_slashes":   {Text: "This listener's `merge_slashes`, overriding the top level (tcp listeners).", Reload: reloadYes, Default: "the top level's (true)"},
	"listeners[].escaped_slashes": {Text: "This listener's `escaped_slashes`, overriding the top level (tcp listeners).", Reload: reloadYes, Values: []string{"keep", "reject", "unescape"}, Default: "the top level's (keep)"},
	"listeners[].tls": {
		Text: "Terminate TLS on a tcp listener, or for QUIC on an xdp listener with `http3: true` (TLS 1.2 and 1.3). Certificates come from files (`certificates`) or from " +
			"an ACME CA (`acme`), or both. A reload reloads the files and options; turning TLS on or off for a " +
			"listener that keeps its address is refused.",
		Reload: reloadYes,
		Example: "listeners:\n  - address: \"0.0.0.0:443\"\n    tls:\n      certificates:\n" +
			"        - {cert: /etc/simdedge/tls/example.com.pem, key: /etc/simdedge/tls/example.com.key}\n" +
			"        - {cert: /etc/simdedge/tls/wildcard.example.net.pem, key: /etc/simdedge/tls/wildcard.example.net.key}\n" +
			"      min_version: \"1.3\"\n      alpn: [h2, http/1.1]\n" +
			"      client_auth: {ca: /etc/simdedge/tls/clients-ca.pem, mode: require}\n" +
			"      handshake_timeout: 5s\n      ticket_rotation: 1h\n",
	},
	"listeners[].tls.certificates": {
		Text:    "PEM certificate chains and keys, chosen by SNI: the exact name, then a one-label wildcard; the first is the default.",
		Syntax:  "[{cert: FILE, key: FILE}, ...]",
		Default: "- (required unless `acme` is set)",
	},
	"listeners[].tls.certificates[].cert": {Text: "PEM file of the certificate chain, leaf first.", Syntax: "FILE", Required: true},
	"listeners[].tls.certificates[].key":  {Text: "PEM file of the private key.", Syntax: "FILE", Required: true},
	"listeners[].tls.min_version":         {Text: "Oldest TLS version accepted.", Values: []string{"1.2", "1.3"}},
	"listeners[].tls.alpn": {
		Text: "ALPN protocols in order of preference, as written. Without it: h2 and http/1.1 (h2 left out when the " +
			"listener says `http2: false`).",
		Syntax: "[PROTOCOL, ...]",
	},
	"listeners[].tls.client_auth": {
		Text: "Mutual TLS: ask clients for certificates signed by `ca`.",
	},
	"listeners[].tls.client_auth.ca":    {Text: "PEM file of the CA certificates that sign client certificates.", Syntax: "FILE", Required: true},
	"listeners[].tls.client_auth.mode":  {Text: "`require` refuses clients without a valid certificate; `verify_if_given` checks one only when sent.", Values: []string{"verify_if_given", "require"}, Default: "verify_if_given"},
	"listeners[].tls.handshake_timeout": {Text: "Time a client has to complete the TLS handshake."},
	"listeners[].tls.ticket_rotation":   {Text: "How often a new session-ticket key starts (24 keys are kept for resumption); read when the listener opens.", Reload: reloadNewListener},
	"listeners[].tls.acme": {
		Text: "Obtain and renew the certificates of `domains` automatically from an ACME CA (Let's Encrypt by default). " +
			"Changing it on a listener that keeps its address is refused by a reload.",
		Reload: reloadNewListener,
		Example: "listeners:\n  - address: \"0.0.0.0:80\"\n    redirect_to_https: true\n  - address: \"0.0.0.0:443\"\n    tls:\n      acme:\n" +
			"        email: ops@example.com\n        domains: [example.com, www.example.com]\n" +
			"        directory: https://acme-v02.api.letsencrypt.org/directory\n        storage: /var/lib/simdedge/acme\n" +
			"        challenges: [tls-alpn-01, http-01]\n        ca: /etc/simdedge/acme-ca.pem\n",
	},
	"listeners[].tls.acme.email":     {Text: "Contact address of the ACME account (optional, but the CA warns it before a certificate expires unrenewed)."},
	"listeners[].tls.acme.directory": {Text: "The ACME server's directory URL (https).", Syntax: "URL"},
	"listeners[].tls.acme.domains": {
		Text:     "Names to obtain certificates for: plain DNS names (HTTP-01 and TLS-ALPN-01 cannot prove a wildcard).",
		Syntax:   "[DNS_NAME, ...]",
		Required: true,
		Default:  "-",
	},
	"listeners[].tls.acme.storage": {Text: "Directory where accounts, keys and certificates persist across restarts; it must be writable.", Syntax: "DIRECTORY"},
	"listeners[].tls.acme.challenges": {
		Text: "Challenge types allowed: `tls-alpn-01` (answered on this listener) and `http-01` (answered on the first " +
			"`redirect_to_https` listener). Both by default, so that either port being blocked still lets a certificate through.",
		Syntax: "[tls-alpn-01 | http-01, ...]",
		Values: []string{"tls-alpn-01", "http-01"},
	},
	"listeners[].tls.acme.ca": {Text: "PEM file of the roots that sign the directory's own HTTPS certificate, for a private ACME server.", Syntax: "FILE", Default: "- (the system's roots)"},
	"listeners[].xdp": {
		Text: "An AF_XDP listener (`transport: xdp`): which interface and receive queues it takes over, which IPv4 " +
			"address it serves and on which ports. The XDP program steers only those ports; everything else (ARP, ICMP, SSH) " +
			"stays with the kernel. Needs root, or CAP_BPF, CAP_NET_ADMIN and CAP_NET_RAW.",
		Reload: reloadNo,
		Example: "listeners:\n  - transport: xdp\n    xdp:\n      interface: eth1\n      queues: [0, 1]\n      address: 10.0.0.10\n" +
			"      tcp_port: 8080\n      udp_port: 8081\n      mode: native\n      ring_size: 2048\n      frame_size: 4096\n      frames: 8192\n",
	},
	"listeners[].xdp.interface": {Text: "Network interface to attach to.", Syntax: "NAME", Required: true},
	"listeners[].xdp.queues":    {Text: "Receive queues to bind, one AF_XDP socket each (0-1023). Steer the traffic onto them with ethtool (RSS or ntuple rules)."},
	"listeners[].xdp.address":   {Text: "IPv4 address served (the interface's own, or one routed to it).", Syntax: "IPV4", Required: true},
	"listeners[].xdp.tcp_port":  {Text: "Port served by the userspace TCP stack; 0 turns it off. At least one of `tcp_port` and `udp_port` is needed.", Default: "- (off)", Range: [2]int64{0, 65535}},
	"listeners[].xdp.udp_port":  {Text: "Port of the datagram fast path: one HTTP/1.1 request per UDP datagram, one response per datagram (a larger response is replaced by a 507 that tells the client to use TCP); 0 turns it off.", Default: "- (off)", Range: [2]int64{0, 65535}},
	"listeners[].xdp.mode":      {Text: "`native` (the driver runs the program; fastest) or `generic` (the kernel's skb path; works on any interface).", Values: []string{"native", "generic"}},
	"listeners[].xdp.ring_size": {Text: "Entries of each ring (a power of two, 64-65536)."},
	"listeners[].xdp.frame_size": {
		Text:   "UMEM frame size in bytes: 2048 or 4096 (one packet per frame).",
		Values: []string{"2048", "4096"},
	},
	"listeners[].xdp.frames": {Text: "UMEM frames per socket: at least twice `ring_size` (fill and TX rings), at most 1048576.", Default: "twice `ring_size` (4096)"},
	"listeners[].rdma": {
		Text: "An RDMA listener (`transport: rdma`, libfabric FI_EP_MSG endpoints): one request per message. " +
			"Needs a binary built with `-tags rdma` and libfabric.",
		Reload: reloadNo,
		Example: "listeners:\n  - transport: rdma\n    address: \"10.0.0.10:7471\"\n    rdma:\n      provider: verbs\n" +
			"      credits: 64\n      message_size: 65536\n      poll: busy\n      spin: 50us\n",
	},
	"listeners[].rdma.provider":     {Text: "libfabric provider: `tcp`, `shm`, `verbs` (InfiniBand, RoCE) or another that `fi_info` lists.", Syntax: "PROVIDER"},
	"listeners[].rdma.credits":      {Text: "Receive buffers posted per connection (1-4096): how many requests a client may have in flight."},
	"listeners[].rdma.message_size": {Text: "Size of each receive buffer in bytes (1024 to 16 MiB); larger bodies move by rendezvous (RDMA READ)."},
	"listeners[].rdma.poll": {
		Text:    "How a connection waits for completions: `block` parks in the network poller, `busy` polls for `spin` after the last activity before it blocks (a core stays busy meanwhile).",
		Values:  []string{"block", "busy"},
		Example: "listeners:\n  - transport: rdma\n    address: \"10.0.0.10:7471\"\n    rdma: {provider: tcp, poll: block}\n",
	},
	"listeners[].rdma.spin": {Text: "Spin budget of `poll: busy` (1us to 10ms).", Default: "100µs (with `poll: busy`)"},
}
