package discover

import (
	"cmp"
	"context"
	"errors"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"time"

	"github.com/simdedge/simdedge/server/upstream"
	"golang.org/x/net/dns/dnsmessage"
)

// Family says which address records a name resolves through.
type Family string

// Families (Envoy's dns_lookup_family, nginx's resolver ipv4=/ipv6=).
const (
	FamilyAny  Family = "any" // A and AAAA
	FamilyIPv4 Family = "ipv4"
	FamilyIPv6 Family = "ipv6"
)

// Options configure a Resolver. Zero values take the defaults.
type Options struct {
	// Servers are the DNS servers asked, "ip:port", in order until one
	// answers. Empty: the system resolver (/etc/resolv.conf through Go's
	// net.Resolver), which reports no TTL, so Interval applies.
	Servers []string
	// Interval is how often a name is resolved again when its answer
	// carries no TTL (the system resolver), or RespectTTL is false; and
	// how soon a failed lookup is tried again.
	Interval time.Duration
	// RespectTTL: re-resolve when the answer's smallest TTL runs out
	// (bounded by MinRefresh and MaxRefresh), rather than every Interval.
	RespectTTL bool
	// Timeout bounds one round of lookups of every name.
	Timeout time.Duration
	Family  Family
}

// Defaults and bounds.
const (
	// DefaultInterval is Envoy's dns_refresh_rate default.
	DefaultInterval = 5 * time.Second
	DefaultTimeout  = 2 * time.Second
	// MinRefresh keeps a zero or tiny TTL from turning into a query
	// loop; MaxRefresh makes a huge TTL still notice a change within
	// the hour.
	MinRefresh = time.Second
	MaxRefresh = time.Hour
	// maxSRVWeight: an SRV weight (0-65535) maps onto a pool weight,
	// 0 (RFC 2782: "no weighting") to 1 and beyond upstream.MaxWeight
	// to it.
	maxSRVWeight = upstream.MaxWeight
)

// ErrEmpty: a name resolved to no address (the answer is kept from
// before: a pool needs targets, and an empty answer is more often a
// broken zone than a service with no instance).
var ErrEmpty = errors.New("discover: no address records")

// Resolver resolves Names. It is safe for concurrent use.
type Resolver struct {
	o Options
}

// New returns a Resolver for o, defaults filled.
func New(o Options) *Resolver {
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Family == "" {
		o.Family = FamilyAny
	}
	return &Resolver{o: o}
}

// Options returns the resolver's options, defaults filled.
func (r *Resolver) Options() Options { return r.o }

// answer is what one name resolved to.
type answer struct {
	targets []upstream.TargetSpec
	// ttl is the answer's smallest TTL, noTTL when the resolver gave
	// none (the system resolver). A TTL of 0 is a TTL ("do not cache").
	ttl time.Duration
}

// noTTL marks an answer without a TTL.
const noTTL time.Duration = -1

// minTTL is the smaller of two TTLs, either of which may be noTTL.
func minTTL(a, b time.Duration) time.Duration {
	switch {
	case a == noTTL:
		return b
	case b == noTTL:
		return a
	}
	return min(a, b)
}

// Resolve looks every name up and returns the targets in a stable order
// (names in order, each name's addresses sorted), merged where two names
// give one address (the first weight wins), and when to resolve again.
func (r *Resolver) Resolve(ctx context.Context, names []Name) ([]upstream.TargetSpec, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, r.o.Timeout)
	defer cancel()
	var out []upstream.TargetSpec
	seen := map[string]bool{}
	ttl := noTTL
	for _, n := range names {
		a, err := r.lookup(ctx, n)
		if err == nil && len(a.targets) == 0 {
			err = ErrEmpty
		}
		if err != nil {
			return nil, r.o.Interval, err
		}
		for _, t := range a.targets {
			if !seen[t.Address] {
				seen[t.Address] = true
				out = append(out, t)
			}
		}
		ttl = minTTL(ttl, a.ttl)
	}
	return out, r.refresh(ttl), nil
}

// refresh is when to look again after an answer whose smallest TTL is ttl.
func (r *Resolver) refresh(ttl time.Duration) time.Duration {
	if !r.o.RespectTTL || ttl == noTTL {
		return r.o.Interval
	}
	return min(max(ttl, MinRefresh), MaxRefresh)
}

func (r *Resolver) lookup(ctx context.Context, n Name) (answer, error) {
	w := max(n.Weight, 1)
	if n.SRV {
		return r.lookupSRV(ctx, n.Host)
	}
	ips, ttl, err := r.lookupIP(ctx, n.Host, nil)
	if err != nil {
		return answer{}, err
	}
	a := answer{ttl: ttl}
	for _, ip := range ips {
		a.targets = append(a.targets, upstream.TargetSpec{Address: netip.AddrPortFrom(ip, n.Port).String(), Weight: w})
	}
	return a, nil
}

// lookupIP returns host's addresses (sorted) and their smallest TTL. glue
// are additional records of an SRV answer, used when they hold host's
// addresses.
func (r *Resolver) lookupIP(ctx context.Context, host string, glue []record) ([]netip.Addr, time.Duration, error) {
	var ips []netip.Addr
	ttl := noTTL
	take := func(rec record) {
		if ip, ok := netip.AddrFromSlice(rec.ip); ok {
			ips = append(ips, ip.Unmap())
			ttl = minTTL(ttl, seconds(rec.ttl))
		}
	}
	for _, rec := range glue {
		if rec.ip != nil && sameName(rec.name, host) && r.wants(rec.typ) {
			take(rec)
		}
	}
	if len(ips) > 0 {
		return sortAddrs(ips), ttl, nil
	}
	if len(r.o.Servers) == 0 {
		network := map[Family]string{FamilyAny: "ip", FamilyIPv4: "ip4", FamilyIPv6: "ip6"}[r.o.Family]
		got, err := net.DefaultResolver.LookupNetIP(ctx, network, host)
		for i := range got {
			got[i] = got[i].Unmap()
		}
		return sortAddrs(got), noTTL, err
	}
	var types []dnsmessage.Type
	if r.o.Family != FamilyIPv6 {
		types = append(types, dnsmessage.TypeA)
	}
	if r.o.Family != FamilyIPv4 {
		types = append(types, dnsmessage.TypeAAAA)
	}
	for _, typ := range types {
		recs, err := r.ask(ctx, host, typ)
		if err != nil && !(errors.Is(err, ErrNXDomain) && typ == dnsmessage.TypeAAAA && len(ips) > 0) {
			return nil, noTTL, err
		}
		// A CNAME chain ends at the records of its last name: take
		// every address record of the answer.
		for _, rec := range recs {
			if rec.ip != nil && rec.typ == typ {
				take(rec)
			}
		}
	}
	return sortAddrs(ips), ttl, nil
}

// lookupSRV resolves an SRV name: the records of the lowest priority
// (RFC 2782: higher ones are for when those fail; the pool's health and
// failover do that job here), each target host resolved to its addresses.
func (r *Resolver) lookupSRV(ctx context.Context, name string) (answer, error) {
	type srv struct {
		target       string
		port, weight uint16
		priority     uint16
		ttl          uint32
		hasTTL       bool
	}
	var srvs []srv
	var glue []record
	if len(r.o.Servers) == 0 {
		_, got, err := net.DefaultResolver.LookupSRV(ctx, "", "", name)
		if err != nil {
			return answer{}, err
		}
		for _, s := range got {
			srvs = append(srvs, srv{target: s.Target, port: s.Port, weight: s.Weight, priority: s.Priority})
		}
	} else {
		recs, err := r.ask(ctx, name, dnsmessage.TypeSRV)
		if err != nil {
			return answer{}, err
		}
		for _, rec := range recs {
			if rec.typ == dnsmessage.TypeSRV {
				srvs = append(srvs, srv{rec.target, rec.port, rec.weight, rec.priority, rec.ttl, true})
			} else {
				glue = append(glue, rec)
			}
		}
	}
	if len(srvs) == 0 {
		return answer{}, ErrEmpty
	}
	low := slices.MinFunc(srvs, func(a, b srv) int { return cmp.Compare(a.priority, b.priority) }).priority
	a := answer{ttl: noTTL}
	for _, s := range srvs {
		if s.priority != low || s.target == "." {
			continue // "." : the service is decidedly not available (RFC 2782)
		}
		if s.hasTTL {
			a.ttl = minTTL(a.ttl, seconds(s.ttl))
		}
		ips, ipTTL, err := r.lookupIP(ctx, s.target, glue)
		if err != nil {
			return answer{}, err
		}
		a.ttl = minTTL(a.ttl, ipTTL)
		w := min(max(int(s.weight), 1), maxSRVWeight)
		for _, ip := range ips {
			a.targets = append(a.targets, upstream.TargetSpec{Address: netip.AddrPortFrom(ip, s.port).String(), Weight: w})
		}
	}
	return a, nil
}

// ask sends the question to each server in turn until one answers.
func (r *Resolver) ask(ctx context.Context, name string, typ dnsmessage.Type) ([]record, error) {
	var err error
	for _, s := range r.o.Servers {
		var recs []record
		if recs, err = exchange(ctx, s, name, typ); err == nil || errors.Is(err, ErrNXDomain) {
			return recs, err
		}
	}
	return nil, err
}

// wants reports whether an address record of type typ is of r's family.
func (r *Resolver) wants(typ dnsmessage.Type) bool {
	switch r.o.Family {
	case FamilyIPv4:
		return typ == dnsmessage.TypeA
	case FamilyIPv6:
		return typ == dnsmessage.TypeAAAA
	}
	return true
}

func sameName(a, b string) bool { return equalFoldASCII(fqdn(a), fqdn(b)) }

func equalFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

func sortAddrs(a []netip.Addr) []netip.Addr {
	slices.SortFunc(a, netip.Addr.Compare)
	return slices.Compact(a)
}

func seconds(ttl uint32) time.Duration { return time.Duration(ttl) * time.Second }

// String is for logs.
func (n Name) String() string {
	if n.SRV {
		return SRVScheme + n.Host
	}
	return net.JoinHostPort(n.Host, strconv.Itoa(int(n.Port)))
}
