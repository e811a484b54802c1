package config

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/simdedge/simdedge/server"
	"go.yaml.in/yaml/v3"
)

// Transports a listener may name.
const (
	TransportTCP  = "tcp"  // kernel sockets
	TransportXDP  = "xdp"  // AF_XDP: userspace TCP and the datagram fast path
	TransportRDMA = "rdma" // RDMA send/receive queues (libfabric)
)

// Engines a tcp listener may name (server.Engine): "loop", an epoll event
// loop that answers non-blocking routes (respond, echo) in one pass and
// hands other requests to goroutines, or "goroutine", a goroutine per
// connection. DefaultEngine measured better (docs/decisions/0007-loop-engine.md).
const (
	EngineLoop      = string(server.EngineLoop)
	EngineGoroutine = string(server.EngineGoroutine)
	DefaultEngine   = EngineLoop
	// DefaultProxyOnLoop: whether the loop engine proxies by itself
	// (Config.ProxyOnLoop) unless the configuration says. On: it measured
	// less CPU per proxied request than handing connections to goroutines
	// (docs/decisions/0007-loop-engine.md).
	DefaultProxyOnLoop = true
	// MaxLoops bounds a listener's loops (more loops than cores only
	// add switching).
	MaxLoops = 1024
)

// Defaults of the xdp and rdma sections. They mirror the defaults of the
// xdp and rdma packages, which this package may not import (layers);
// cmd/simdedge's TestListenerDefaultsMirror checks that they agree. The
// frame count defaults to twice the ring size, as in package xdp.
const (
	DefaultXDPMode      = "native"
	DefaultXDPRingSize  = 2048
	DefaultXDPFrameSize = 4096
	DefaultRDMAProvider = "tcp"
	DefaultRDMACredits  = 32
	DefaultRDMAMessage  = 64 << 10
	DefaultRDMAPoll     = RDMAPollBlock
	// DefaultRDMASpin is the spin budget of poll: busy (rdma.DefaultSpin).
	DefaultRDMASpin = Duration(100 * time.Microsecond)
	// maxRDMASpin mirrors rdma.MaxSpin.
	maxRDMASpin = Duration(10 * time.Millisecond)
)

// RDMA poll modes (rdma.PollMode).
const (
	RDMAPollBlock = "block" // park in the network poller when the queue is empty
	RDMAPollBusy  = "busy"  // poll for spin after the last activity, then park
)

// Listener is one place requests arrive: a kernel TCP address, an AF_XDP
// interface, or an RDMA address. The top-level `listen` is shorthand for a
// tcp listener.
type Listener struct {
	Transport string `yaml:"transport"`
	// Address is "host:port" for tcp and rdma; xdp names its address in
	// its own section.
	Address string `yaml:"address,omitempty"`
	// Engine serves a tcp listener: "loop" or "goroutine" (see
	// EngineLoop); empty takes the configuration's top-level engine.
	Engine string `yaml:"engine,omitempty"`
	// Loops is the number of event loops of a tcp listener on the loop
	// engine: that many sockets bound to the address with SO_REUSEPORT
	// (Linux), among which the kernel spreads connections, each served by
	// its own loop; one per core the server may use. 0 means 1.
	Loops int   `yaml:"loops,omitempty"`
	XDP   *XDP  `yaml:"xdp,omitempty"`
	RDMA  *RDMA `yaml:"rdma,omitempty"`
	// TLS terminates TLS on a tcp listener (tls.go); RedirectToHTTPS
	// answers every request of a plain one 308 to the first TLS listener.
	TLS             *ListenerTLS `yaml:"tls,omitempty"`
	RedirectToHTTPS bool         `yaml:"redirect_to_https,omitempty"`
	// ProxyProtocol, Allow, Deny: see access.go (tcp listeners).
	ProxyProtocol bool     `yaml:"proxy_protocol,omitempty"`
	Allow         []string `yaml:"allow,omitempty,flow"`
	Deny          []string `yaml:"deny,omitempty,flow"`
	// H2C serves HTTP/2 with prior knowledge on a plain tcp listener;
	// HTTP2 offers h2 by ALPN on a TLS one (http2.go).
	H2C   bool  `yaml:"h2c,omitempty"`
	HTTP2 *bool `yaml:"http2,omitempty"`
	// HTTP3 serves QUIC on the same port over UDP (http3.go); on an xdp
	// listener, on its udp_port over AF_XDP.
	HTTP3 bool `yaml:"http3,omitempty"`
	// Paths: the listener's own path normalisation keys (paths.go; tcp
	// listeners).
	Paths `yaml:",inline"`
	line  int
}

// XDP configures an AF_XDP listener: which interface and receive queues
// it takes over, which IPv4 address it serves, and on which ports. The
// XDP program steers only those ports; everything else (ARP, ICMP, SSH)
// stays with the kernel.
type XDP struct {
	Interface string `yaml:"interface"`
	Queues    []int  `yaml:"queues,flow"`
	Address   string `yaml:"address"`
	// TCPPort is served by the userspace TCP stack, UDPPort by the
	// one-request-per-datagram fast path; 0 turns either off.
	TCPPort int `yaml:"tcp_port,omitempty"`
	UDPPort int `yaml:"udp_port,omitempty"`
	// Mode is "native" (the driver runs the program) or "generic" (the
	// kernel's skb path; works everywhere, slower).
	Mode      string `yaml:"mode"`
	RingSize  int    `yaml:"ring_size"`
	FrameSize int    `yaml:"frame_size"`
	Frames    int    `yaml:"frames"`
}

// RDMA configures an RDMA listener (libfabric, FI_EP_MSG endpoints).
type RDMA struct {
	// Provider is a libfabric provider: "tcp", "shm", "verbs".
	Provider string `yaml:"provider"`
	// Credits is the number of receive buffers posted per connection: how
	// many requests a client may have in flight.
	Credits int `yaml:"credits"`
	// MessageSize is the size of each receive buffer; larger bodies move
	// by rendezvous (RDMA READ).
	MessageSize int `yaml:"message_size"`
	// Poll is how a connection's poller waits for completions: "block"
	// (default) or "busy" (poll for Spin after the last activity before
	// it blocks, as fi_pingpong does; a core stays busy meanwhile).
	Poll string `yaml:"poll,omitempty"`
	// Spin is busy's spin budget (1µs-10ms), default 100µs.
	Spin Duration `yaml:"spin,omitempty"`
}

func (d *decoder) listeners(v *yaml.Node, key string, c *Config) {
	if v.Kind != yaml.SequenceNode {
		d.fail(v, key, "must be a list")
		return
	}
	for i, e := range v.Content {
		l := Listener{line: e.Line}
		path := fmt.Sprintf("%s[%d]", key, i)
		h2keys := d.listenerHTTP2(&l)
		fields := map[string]func(*yaml.Node, string){
			"h2c":       h2keys["h2c"],
			"http2":     h2keys["http2"],
			"transport": d.str(&l.Transport),
			"address":   d.str(&l.Address),
			"engine":    d.str(&l.Engine),
			"loops":     d.intField(&l.Loops),
			"tls":       d.listenerTLS(&l.TLS),
			"redirect_to_https": func(v *yaml.Node, key string) {
				var b *bool
				d.boolean(&b)(v, key)
				l.RedirectToHTTPS = b != nil && *b
			},
			"proxy_protocol": d.flag(&l.ProxyProtocol),
			"http3":          d.flag(&l.HTTP3),
			"allow":          d.cidrs(&l.Allow),
			"deny":           d.cidrs(&l.Deny),
			"xdp": func(v *yaml.Node, key string) {
				l.XDP = &XDP{}
				x := l.XDP
				d.fields(v, key, map[string]func(*yaml.Node, string){
					"interface":  d.str(&x.Interface),
					"queues":     d.ints(&x.Queues),
					"address":    d.str(&x.Address),
					"tcp_port":   d.intField(&x.TCPPort),
					"udp_port":   d.intField(&x.UDPPort),
					"mode":       d.str(&x.Mode),
					"ring_size":  d.intField(&x.RingSize),
					"frame_size": d.intField(&x.FrameSize),
					"frames":     d.intField(&x.Frames),
				})
			},
			"rdma": func(v *yaml.Node, key string) {
				l.RDMA = &RDMA{}
				r := l.RDMA
				d.fields(v, key, map[string]func(*yaml.Node, string){
					"provider":     d.str(&r.Provider),
					"credits":      d.intField(&r.Credits),
					"message_size": d.intField(&r.MessageSize),
					"poll":         d.str(&r.Poll),
					"spin":         d.duration(&r.Spin),
				})
			},
		}
		d.pathKeys(&l.Paths, fields)
		d.fields(e, path, fields)
		l.validateHTTP2(d, &yaml.Node{Line: l.line}, path)
		l.validateHTTP3(d, &yaml.Node{Line: l.line}, path)
		c.Listeners = append(c.Listeners, l)
	}
}

func (d *decoder) ints(dst *[]int) func(*yaml.Node, string) {
	return func(v *yaml.Node, key string) {
		if v.Kind != yaml.SequenceNode {
			d.fail(v, key, "must be a list")
			return
		}
		for i, e := range v.Content {
			var n int
			d.intField(&n)(e, fmt.Sprintf("%s[%d]", key, i))
			*dst = append(*dst, n)
		}
	}
}

func (c *Config) validateListeners(d *decoder) {
	for i, l := range c.Listeners {
		key := fmt.Sprintf("listeners[%d]", i)
		at := &yaml.Node{Line: l.line}
		if l.Transport == "" {
			l.Transport = TransportTCP
		}
		if (l.ProxyProtocol || len(l.Allow)+len(l.Deny) > 0) && l.Transport != TransportTCP {
			d.fail(at, key, "proxy_protocol, allow and deny are for transport: tcp")
		}
		if l.Paths.set() && l.Transport != TransportTCP {
			// xdp and rdma requests take the top level's keys.
			d.fail(at, key, "normalize_path, merge_slashes and escaped_slashes are for transport: tcp")
		}
		if l.ProxyProtocol && l.RedirectToHTTPS {
			d.fail(at, key+".proxy_protocol", "not supported with redirect_to_https")
		}
		if l.XDP != nil && l.Transport != TransportXDP {
			d.fail(at, key+".xdp", "only for transport: xdp")
		}
		if l.RDMA != nil && l.Transport != TransportRDMA {
			d.fail(at, key+".rdma", "only for transport: rdma")
		}
		if l.Engine != "" && l.Transport != TransportTCP {
			d.fail(at, key+".engine", "only for transport: tcp")
		} else if l.Engine != "" && !validEngine(l.Engine) {
			d.fail(at, key+".engine", `must be "loop" or "goroutine"`)
		}
		switch {
		case l.Loops == 0:
		case l.Loops < 0 || l.Loops > MaxLoops:
			d.fail(at, key+".loops", fmt.Sprintf("must be 1-%d", MaxLoops))
		case l.Loops > 1 && l.withDefaults(c.engine()).Engine != EngineLoop && !d.failedWithin("engine"):
			d.fail(at, key+".loops", "only for engine: loop")
		}
		c.validateTLS(d, at, key, l)
		switch l.Transport {
		case TransportTCP, TransportRDMA:
			if msg := listenAddrProblem(l.Address); msg != "" {
				d.fail(at, key+".address", msg)
			}
			if r := l.RDMA; r != nil {
				if r.Credits < 0 || r.Credits > 4096 {
					d.fail(at, key+".rdma.credits", "must be 1-4096")
				}
				if r.MessageSize != 0 && (r.MessageSize < 1024 || r.MessageSize > 16<<20) {
					d.fail(at, key+".rdma.message_size", "must be 1024 bytes to 16 MiB")
				}
				validateRDMAPoll(d, at, key+".rdma", r)
			}
		case TransportXDP:
			validateXDP(d, at, key, l)
		default:
			d.fail(at, key+".transport", `must be "tcp", "xdp" or "rdma"`)
		}
	}
}

func validateRDMAPoll(d *decoder, at *yaml.Node, key string, r *RDMA) {
	switch r.Poll {
	case "", RDMAPollBlock:
		if r.Spin != 0 {
			d.fail(at, key+".spin", "only with poll: busy")
		}
	case RDMAPollBusy:
		if r.Spin != 0 && (r.Spin < Duration(time.Microsecond) || r.Spin > maxRDMASpin) {
			d.fail(at, key+".spin", "must be 1us to 10ms")
		}
	default:
		d.fail(at, key+".poll", `must be "block" or "busy"`)
	}
}

func validateXDP(d *decoder, at *yaml.Node, key string, l Listener) {
	if l.Address != "" {
		d.fail(at, key+".address", "xdp listeners name their address in the xdp section")
	}
	x := l.XDP
	if x == nil {
		d.fail(at, key+".xdp", "missing: transport xdp needs interface, address and a port")
		return
	}
	key += ".xdp"
	if x.Interface == "" {
		d.fail(at, key+".interface", "missing")
	}
	if a, err := netip.ParseAddr(x.Address); err != nil || !a.Is4() {
		d.fail(at, key+".address", "must be an IPv4 address")
	}
	if x.TCPPort == 0 && x.UDPPort == 0 {
		d.fail(at, key, "needs tcp_port, udp_port or both")
	}
	for _, p := range []struct {
		name string
		v    int
	}{{"tcp_port", x.TCPPort}, {"udp_port", x.UDPPort}} {
		if p.v > 65535 {
			d.fail(at, key+"."+p.name, "must be 1-65535")
		}
	}
	for j, q := range x.Queues {
		if q > 1023 {
			d.fail(at, key+".queues["+strconv.Itoa(j)+"]", "must be 0-1023")
		}
	}
	if x.Mode != "" && x.Mode != "native" && x.Mode != "generic" {
		d.fail(at, key+".mode", `must be "native" or "generic"`)
	}
	if n := x.RingSize; n != 0 && (n < 64 || n > 1<<16 || n&(n-1) != 0) {
		d.fail(at, key+".ring_size", "must be a power of two, 64-65536")
	}
	if n := x.FrameSize; n != 0 && n != 2048 && n != 4096 {
		d.fail(at, key+".frame_size", "must be 2048 or 4096")
	}
	if n := x.Frames; n != 0 && (n < 2*max(x.RingSize, 64) || n > 1<<20) {
		d.fail(at, key+".frames", "must hold the fill and TX rings: 2x ring_size to 1048576")
	}
}

// EffectiveListeners is what the server opens, defaults filled in: the
// `listen` shorthand first (or the default address when nothing is
// configured), then each entry of `listeners`.
func (c *Config) EffectiveListeners() []Listener {
	var out []Listener
	if c.Listen != "" || len(c.Listeners) == 0 {
		addr := c.Listen
		if addr == "" {
			addr = DefaultListen
		}
		out = append(out, Listener{Transport: TransportTCP, Address: addr, Engine: c.engine(), Loops: 1})
	}
	for _, l := range c.Listeners {
		out = append(out, l.withDefaults(c.engine()))
	}
	return out
}

// engine is the engine of tcp listeners that name none.
func (c *Config) engine() string {
	if c.Engine != "" {
		return c.Engine
	}
	return DefaultEngine
}

func validEngine(e string) bool { return e == EngineLoop || e == EngineGoroutine }

func (l Listener) withDefaults(engine string) Listener {
	if l.Transport == "" {
		l.Transport = TransportTCP
	}
	if l.Transport == TransportTCP && l.Engine == "" {
		l.Engine = engine
	}
	if l.Transport == TransportTCP && l.Loops == 0 {
		l.Loops = 1
	}
	l.TLS = l.TLS.withDefaults()
	l.http2Defaults()
	switch l.Transport {
	case TransportXDP:
		x := XDP{}
		if l.XDP != nil {
			x = *l.XDP
		}
		x.Queues = append([]int(nil), x.Queues...)
		if len(x.Queues) == 0 {
			x.Queues = []int{0}
		}
		if x.Mode == "" {
			x.Mode = DefaultXDPMode
		}
		if x.RingSize == 0 {
			x.RingSize = DefaultXDPRingSize
		}
		if x.FrameSize == 0 {
			x.FrameSize = DefaultXDPFrameSize
		}
		if x.Frames == 0 {
			x.Frames = 2 * x.RingSize
		}
		l.XDP = &x
	case TransportRDMA:
		r := RDMA{}
		if l.RDMA != nil {
			r = *l.RDMA
		}
		if r.Provider == "" {
			r.Provider = DefaultRDMAProvider
		}
		if r.Credits == 0 {
			r.Credits = DefaultRDMACredits
		}
		if r.MessageSize == 0 {
			r.MessageSize = DefaultRDMAMessage
		}
		if r.Poll == "" {
			r.Poll = DefaultRDMAPoll
		}
		if r.Poll == RDMAPollBusy && r.Spin == 0 {
			r.Spin = DefaultRDMASpin
		}
		l.RDMA = &r
	}
	return l
}

// listenAddrProblem is what is wrong with listen address a ("" if
// nothing): "host:port", port 0 (any free port) included.
func listenAddrProblem(a string) string {
	host, port, err := net.SplitHostPort(a)
	if err != nil || port == "" || strings.ContainsAny(host, " /") {
		return `must be "host:port"`
	}
	if msg := portRangeProblem(port, minListenPort); msg != "" {
		return msg
	}
	if _, err := strconv.Atoi(port); err != nil {
		return `must be "host:port"`
	}
	return ""
}
