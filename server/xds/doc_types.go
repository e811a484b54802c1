package xds

// The config document Translate produces: the keys of server/config's
// listeners, routes and upstreams, and only those that the mapping
// fills. Merge encodes it beside the static file and server/config
// parses the whole, so every check of a file applies to it too.

// Fragment is what the xDS resources translate to.
type Fragment struct {
	Listeners []Listener `yaml:"listeners,omitempty"`
	Routes    []Route    `yaml:"routes,omitempty"`
	Upstreams []Upstream `yaml:"upstreams,omitempty"`
}

// Listener is a tcp listener (listeners[]).
type Listener struct {
	Transport string `yaml:"transport"`
	Address   string `yaml:"address"`
}

// Route is routes[].
type Route struct {
	Name     string    `yaml:"name"`
	Match    Match     `yaml:"match"`
	Respond  *Respond  `yaml:"respond,omitempty"`
	Proxy    *Proxy    `yaml:"proxy,omitempty"`
	Redirect *Redirect `yaml:"redirect,omitempty"`
	Rewrite  *Rewrite  `yaml:"rewrite,omitempty"`
}

// Match is routes[].match. Headers map a field name to its exact value
// or to {prefix: ...}, {regex: ...}, {present: true}.
type Match struct {
	Host       string            `yaml:"host,omitempty"`
	Path       string            `yaml:"path,omitempty"`
	PathPrefix string            `yaml:"path_prefix,omitempty"`
	PathRegex  string            `yaml:"path_regex,omitempty"`
	Methods    []string          `yaml:"methods,omitempty,flow"`
	Headers    map[string]any    `yaml:"headers,omitempty"`
	Query      map[string]string `yaml:"query,omitempty"`
}

// Respond is routes[].respond.
type Respond struct {
	Status int    `yaml:"status"`
	Body   string `yaml:"body,omitempty"`
}

// Proxy is routes[].proxy.
type Proxy struct {
	Upstream string `yaml:"upstream"`
}

// Redirect is routes[].redirect.
type Redirect struct {
	To     string `yaml:"to"`
	Status int    `yaml:"status"`
}

// Rewrite is routes[].rewrite (replace_prefix only).
type Rewrite struct {
	ReplacePrefix *PrefixReplace `yaml:"replace_prefix,omitempty"`
}

// PrefixReplace is rewrite.replace_prefix.
type PrefixReplace struct {
	From string `yaml:"from"`
	To   string `yaml:"to"`
}

// Upstream is upstreams[].
type Upstream struct {
	Name              string    `yaml:"name"`
	Targets           []Target  `yaml:"targets"`
	Balance           string    `yaml:"balance,omitempty"`
	Hash              *Hash     `yaml:"hash,omitempty"`
	Health            *Health   `yaml:"health,omitempty"`
	Retries           *Retries  `yaml:"retries,omitempty"`
	Timeouts          *Timeouts `yaml:"timeouts,omitempty"`
	MaxConnsPerTarget int       `yaml:"max_conns_per_target,omitempty"`
	Queue             *Queue    `yaml:"queue,omitempty"`
	// Resolve re-resolves host-name targets (STRICT_DNS and LOGICAL_DNS
	// clusters) with the defaults of upstreams[].resolve.
	Resolve *struct{} `yaml:"resolve,omitempty"`
	cluster string    // the xDS cluster it comes from
}

// Target is upstreams[].targets[].
type Target struct {
	Address string `yaml:"address"`
	Weight  int    `yaml:"weight,omitempty"`
}

// Hash is upstreams[].hash.
type Hash struct {
	Key string `yaml:"key"`
}

// Health is upstreams[].health.
type Health struct {
	Active  *Active  `yaml:"active,omitempty"`
	Passive *Passive `yaml:"passive,omitempty"`
}

// Active is upstreams[].health.active.
type Active struct {
	Path           string `yaml:"path"`
	Interval       string `yaml:"interval,omitempty"`
	Timeout        string `yaml:"timeout,omitempty"`
	HealthyAfter   int    `yaml:"healthy_after,omitempty"`
	UnhealthyAfter int    `yaml:"unhealthy_after,omitempty"`
	Expect         string `yaml:"expect,omitempty"`
}

// Passive is upstreams[].health.passive.
type Passive struct {
	ConsecutiveFailures *int   `yaml:"consecutive_failures,omitempty"`
	EjectFor            string `yaml:"eject_for,omitempty"`
	MaxEjected          string `yaml:"max_ejected,omitempty"`
}

// Retries is upstreams[].retries.
type Retries struct {
	Attempts *int     `yaml:"attempts,omitempty"`
	On       []string `yaml:"on,omitempty,flow"`
	Budget   string   `yaml:"budget,omitempty"`
	Backoff  string   `yaml:"backoff,omitempty"`
}

// Timeouts is upstreams[].timeouts.
type Timeouts struct {
	Connect string `yaml:"connect,omitempty"`
	Try     string `yaml:"try,omitempty"`
	Total   string `yaml:"total,omitempty"`
}

// Queue is upstreams[].queue.
type Queue struct {
	Size *int `yaml:"size,omitempty"`
}
