package main

// dynamicDocs: dynamic (configuration from a control plane, server/xds).
var dynamicDocs = map[string]doc{
	"dynamic": {
		Text: "Configuration from a control plane at run time: listeners, routes and upstreams sent over xDS " +
			"(Envoy's protocol; docs/xds.md lists the fields honoured and refused). A file may hold only `dynamic`, " +
			"or combine it with static listeners, routes and upstreams: static routes come first (the first route that " +
			"matches wins, so a static route wins over an xDS one it overlaps), and an xDS listener on a static listener's " +
			"address or a cluster named as a static upstream is refused (NACKed). Served only by a binary built with " +
			"`-tags fleet` (`make build FLEET=1`); another refuses the file by name.",
		Default: "- (none)",
		Reload:  reloadNo,
		Example: "dynamic:\n  xds:\n    server: \"127.0.0.1:18000\"\n    node_id: edge-1\n    cluster: edge\n",
	},
	"dynamic.xds": {
		Text: "The aggregated discovery service (ADS, state of the world) to follow. Updates are applied as a reload " +
			"is, or refused (NACKed) naming the field while the last good configuration serves on; when the control " +
			"plane is unreachable the edge serves on and reconnects with backoff and jitter. The admin `/config` shows " +
			"the client's state under `xds_status`, `/metrics` as `simdedge_xds_*`.",
		Required: true,
	},
	"dynamic.xds.server":  {Text: "The control plane's gRPC address.", Syntax: "HOST:PORT", Required: true, Default: "-"},
	"dynamic.xds.node_id": {Text: "`Node.id`: the name the control plane keys this edge's configuration on.", Syntax: "STRING", Required: true, Default: "-"},
	"dynamic.xds.cluster": {Text: "`Node.cluster`: the group of edges this one belongs to.", Syntax: "STRING", Default: "- (empty)"},
	"dynamic.xds.tls": {
		Text:    "Speak TLS to the control plane (plaintext without this section).",
		Default: "- (plaintext)",
		Example: "dynamic:\n  xds:\n    server: \"cp.internal:18000\"\n    node_id: edge-1\n    cluster: edge\n" +
			"    initial_fetch_timeout: 15s\n    tls:\n      ca: /etc/simdedge/tls/cp-ca.pem\n      server_name: cp.internal\n" +
			"      client_cert: {cert: /etc/simdedge/tls/edge.pem, key: /etc/simdedge/tls/edge.key}\n      insecure_skip_verify: false\n",
	},
	"dynamic.xds.tls.ca":                   {Text: "PEM file of the CAs that sign the control plane's certificate.", Syntax: "FILE", Default: "- (the system's roots)"},
	"dynamic.xds.tls.server_name":          {Text: "Name sent by SNI and verified in the control plane's certificate.", Syntax: "DNS_NAME", Default: "- (the server's host)"},
	"dynamic.xds.tls.client_cert":          {Text: "Client certificate presented to the control plane (mutual TLS).", Default: "- (none)"},
	"dynamic.xds.tls.client_cert.cert":     {Text: "PEM file of the certificate chain.", Syntax: "FILE", Required: true},
	"dynamic.xds.tls.client_cert.key":      {Text: "PEM file of the private key.", Syntax: "FILE", Required: true},
	"dynamic.xds.tls.insecure_skip_verify": {Text: "Do not verify the control plane's certificate."},
	"dynamic.xds.delta": {
		Text: "Follow the control plane with incremental xDS (`DeltaAggregatedResources`: only the resources that " +
			"changed, and the names of those removed) instead of the state of the world.",
		Example: "dynamic:\n  xds:\n    server: \"127.0.0.1:18000\"\n    node_id: edge-1\n    delta: true\n",
	},
	"dynamic.xds.initial_fetch_timeout": {
		Text: "At start, how long to wait for the first complete configuration from the control plane before serving " +
			"the file's static routes alone (Envoy's `initial_fetch_timeout`). A file without routes of its own waits on.",
	},
}
