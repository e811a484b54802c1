package xds

import (
	"cmp"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"google.golang.org/protobuf/types/known/durationpb"
)

// routeUpstream is what an Envoy route says about its upstream that
// simdedge keeps on the upstream: timeouts, retries and the hash key.
// Routes that say the same share one upstream; a route that says
// something else gets an upstream of its own for the same cluster,
// named cluster~policy (variantName), with the same targets.
type routeUpstream struct {
	total, try string
	retries    *Retries
	hashKey    string
}

// variantName names the upstream of cluster with policy p; stable across
// updates so that its pool and health state are kept by a reload.
func variantName(cluster string, p *routeUpstream) string {
	if p == nil {
		return cluster
	}
	var parts []string
	if p.total != "" {
		parts = append(parts, "t"+p.total)
	}
	if p.try != "" {
		parts = append(parts, "try"+p.try)
	}
	if r := p.retries; r != nil {
		if r.Attempts != nil {
			parts = append(parts, "r"+strconv.Itoa(*r.Attempts))
		}
		if len(r.On) > 0 {
			parts = append(parts, "on"+strings.Join(r.On, "+"))
		}
		if r.Backoff != "" {
			parts = append(parts, "b"+r.Backoff)
		}
	}
	if p.hashKey != "" {
		parts = append(parts, "h"+p.hashKey)
	}
	return cluster + "~" + strings.Join(parts, ",")
}

// routeRef is a route's use of a cluster.
type routeRef struct {
	cluster string
	policy  *routeUpstream
	path    string // the route's field path, for errors
}

// readRoutes maps a RouteConfiguration onto routes in simdedge's order:
// Envoy picks the virtual host by its most specific domain, then the
// first route of it that matches; simdedge takes the first route of one
// list that matches, so the virtual hosts' routes are listed exact
// domains first, then "*.suffix" ones longest first, then "*".
func readRoutes(rc *routev3.RouteConfiguration) ([]Route, []routeRef, error) {
	a := at{"route_configuration", rc.GetName()}
	if err := a.known(rc, "", "name", "virtual_hosts"); err != nil {
		return nil, nil, err
	}
	type hosted struct {
		host  string
		rank  int // 0 exact, 1 suffix wildcard, 2 any
		vh    int
		order int
	}
	var hosts []hosted
	seen := map[string]bool{}
	for i, vh := range rc.GetVirtualHosts() {
		p := "virtual_hosts[" + strconv.Itoa(i) + "]"
		if err := a.known(vh, p, "name", "domains", "routes"); err != nil {
			return nil, nil, err
		}
		if len(vh.GetDomains()) == 0 {
			return nil, nil, a.invalid(p+".domains", "needs at least one domain")
		}
		for j, d := range vh.GetDomains() {
			dp := p + ".domains[" + strconv.Itoa(j) + "]"
			h, rank, ok := domain(d)
			if !ok {
				return nil, nil, a.refused(dp + " (a host, \"*.suffix\" or \"*\"; no port, no prefix wildcard)")
			}
			if seen[strings.ToLower(h)] {
				return nil, nil, a.invalid(dp, "duplicate domain")
			}
			seen[strings.ToLower(h)] = true
			hosts = append(hosts, hosted{host: h, rank: rank, vh: i, order: len(hosts)})
		}
	}
	slices.SortStableFunc(hosts, func(x, y hosted) int {
		if c := cmp.Compare(x.rank, y.rank); c != 0 {
			return c
		}
		if x.rank == 1 { // longer suffix first, as Envoy
			return cmp.Compare(len(y.host), len(x.host))
		}
		return 0
	})
	var out []Route
	var refs []routeRef
	for _, h := range hosts {
		vh := rc.GetVirtualHosts()[h.vh]
		for j, r := range vh.GetRoutes() {
			p := "virtual_hosts[" + strconv.Itoa(h.vh) + "].routes[" + strconv.Itoa(j) + "]"
			rt, ref, err := a.route(r, p)
			if err != nil {
				return nil, nil, err
			}
			rt.Match.Host = h.host
			rt.Name = routeName(rc.GetName(), vh.GetName(), r.GetName(), h.host, j)
			out = append(out, rt)
			if ref != nil {
				ref.path = p + ".route.cluster"
				refs = append(refs, *ref)
			}
		}
	}
	return out, refs, nil
}

// routeName: a route's name for metrics and logs, from its names in xDS.
func routeName(rc, vh, r, host string, i int) string {
	name := r
	if name == "" {
		name = strconv.Itoa(i)
	}
	if host == "" {
		host = "*"
	}
	return "xds:" + rc + "/" + vh + "/" + host + "/" + name
}

// domain maps a virtual host domain to match.host ("" for any) and its
// rank in Envoy's order.
func domain(d string) (string, int, bool) {
	switch {
	case d == "*":
		return "", 2, true
	case strings.HasPrefix(d, "*.") && validHost(d[2:]) && !strings.Contains(d[2:], ":"):
		return d, 1, true
	case validHost(d) && net.ParseIP(d) == nil || net.ParseIP(d) != nil && !strings.Contains(d, ":"):
		return d, 0, true
	}
	return "", 0, false
}

// route maps one Route.
func (a at) route(r *routev3.Route, p string) (Route, *routeRef, error) {
	var out Route
	if err := a.known(r, p, "name", "match", "route", "redirect", "direct_response"); err != nil {
		return out, nil, err
	}
	m, err := a.match(r.GetMatch(), p+".match")
	if err != nil {
		return out, nil, err
	}
	out.Match = m
	switch {
	case r.GetRoute() != nil:
		px, ref, rw, err := a.action(r.GetRoute(), p+".route", r.GetMatch())
		if err != nil {
			return out, nil, err
		}
		out.Proxy, out.Rewrite = px, rw
		return out, ref, nil
	case r.GetRedirect() != nil:
		rd, err := a.redirect(r.GetRedirect(), p+".redirect")
		out.Redirect = rd
		return out, nil, err
	case r.GetDirectResponse() != nil:
		dr := r.GetDirectResponse()
		dp := p + ".direct_response"
		if err := a.known(dr, dp, "status", "body"); err != nil {
			return out, nil, err
		}
		if dr.GetStatus() < 200 || dr.GetStatus() > 599 {
			return out, nil, a.invalid(dp+".status", "must be 200-599")
		}
		body := ""
		if b := dr.GetBody(); b != nil {
			if err := a.known(b, dp+".body", "inline_string", "inline_bytes"); err != nil {
				return out, nil, err
			}
			body = b.GetInlineString() + string(b.GetInlineBytes())
		}
		out.Respond = &Respond{Status: int(dr.GetStatus()), Body: body}
		return out, nil, nil
	}
	return out, nil, a.invalid(p, "needs route, redirect or direct_response")
}

// match maps a RouteMatch.
func (a at) match(m *routev3.RouteMatch, p string) (Match, error) {
	var out Match
	if m == nil {
		return out, a.invalid(p, "missing")
	}
	if err := a.known(m, p, "prefix", "path", "safe_regex", "headers", "query_parameters", "case_sensitive"); err != nil {
		return out, err
	}
	if cs := m.GetCaseSensitive(); cs != nil && !cs.GetValue() {
		return out, a.refused(p + ".case_sensitive (false)")
	}
	switch ps := m.GetPathSpecifier().(type) {
	case *routev3.RouteMatch_Prefix:
		if ps.Prefix != "" && ps.Prefix[0] != '/' {
			return out, a.invalid(p+".prefix", "must start with '/'")
		}
		if ps.Prefix != "" && ps.Prefix != "/" {
			out.PathPrefix = ps.Prefix
		}
	case *routev3.RouteMatch_Path:
		if ps.Path == "" || ps.Path[0] != '/' {
			return out, a.invalid(p+".path", "must start with '/'")
		}
		out.Path = ps.Path
	case *routev3.RouteMatch_SafeRegex:
		re, err := a.regex(ps.SafeRegex, p+".safe_regex")
		if err != nil {
			return out, err
		}
		out.PathRegex = re
	default:
		return out, a.invalid(p, "needs prefix, path or safe_regex")
	}
	for i, h := range m.GetHeaders() {
		if err := a.header(h, p+".headers["+strconv.Itoa(i)+"]", &out); err != nil {
			return out, err
		}
	}
	for i, q := range m.GetQueryParameters() {
		qp := p + ".query_parameters[" + strconv.Itoa(i) + "]"
		if err := a.known(q, qp, "name", "string_match"); err != nil {
			return out, err
		}
		sm := q.GetStringMatch()
		if err := a.known(sm, qp+".string_match", "exact"); err != nil {
			return out, err
		}
		if sm == nil || q.GetName() == "" {
			return out, a.invalid(qp, "needs name and string_match.exact")
		}
		if out.Query == nil {
			out.Query = map[string]string{}
		}
		if _, dup := out.Query[q.GetName()]; dup {
			return out, a.refused(qp + " (a second matcher on one parameter)")
		}
		out.Query[q.GetName()] = sm.GetExact()
	}
	return out, nil
}

// maxRegex bounds a regex from the control plane, as Envoy's
// max_program_size bounds RE2 programs.
const maxRegex = 4096

// regex checks an RE2 regex and anchors it: Envoy's safe_regex matches
// the whole value, simdedge's path_regex and header regex a part.
func (a at) regex(r *matcherv3.RegexMatcher, p string) (string, error) {
	if err := a.known(r, p, "regex", "google_re2"); err != nil {
		return "", err
	}
	s := r.GetRegex()
	if s == "" || len(s) > maxRegex {
		return "", a.invalid(p+".regex", "missing or too long")
	}
	full := "^(?:" + s + ")$"
	if _, err := regexp.Compile(full); err != nil {
		return "", a.invalid(p+".regex", "does not compile as RE2")
	}
	return full, nil
}

// header maps a HeaderMatcher onto match.headers, or match.methods for
// an exact ":method".
func (a at) header(h *routev3.HeaderMatcher, p string, m *Match) error {
	if err := a.known(h, p, "name", "exact_match", "prefix_match", "safe_regex_match", "present_match", "string_match"); err != nil {
		return err
	}
	name := h.GetName()
	if name == "" || len(name) > 256 {
		return a.invalid(p+".name", "missing or too long")
	}
	var v any
	// The deprecated exact_match, prefix_match and safe_regex_match are
	// what older control planes still send.
	switch s := h.GetHeaderMatchSpecifier().(type) {
	case *routev3.HeaderMatcher_ExactMatch:
		//lint:ignore SA1019 still sent by older control planes
		v = s.ExactMatch
	case *routev3.HeaderMatcher_PrefixMatch:
		//lint:ignore SA1019 still sent by older control planes
		v = map[string]string{"prefix": s.PrefixMatch}
	case *routev3.HeaderMatcher_SafeRegexMatch:
		//lint:ignore SA1019 still sent by older control planes
		re, err := a.regex(s.SafeRegexMatch, p+".safe_regex_match")
		if err != nil {
			return err
		}
		v = map[string]string{"regex": re}
	case *routev3.HeaderMatcher_PresentMatch:
		v = map[string]bool{"present": s.PresentMatch}
	case *routev3.HeaderMatcher_StringMatch:
		sm := s.StringMatch
		sp := p + ".string_match"
		if err := a.known(sm, sp, "exact", "prefix", "safe_regex"); err != nil {
			return err
		}
		switch x := sm.GetMatchPattern().(type) {
		case *matcherv3.StringMatcher_Exact:
			v = x.Exact
		case *matcherv3.StringMatcher_Prefix:
			v = map[string]string{"prefix": x.Prefix}
		case *matcherv3.StringMatcher_SafeRegex:
			re, err := a.regex(x.SafeRegex, sp+".safe_regex")
			if err != nil {
				return err
			}
			v = map[string]string{"regex": re}
		default:
			return a.invalid(sp, "needs exact, prefix or safe_regex")
		}
	default:
		return a.invalid(p, "needs a match")
	}
	if name == ":method" {
		s, ok := v.(string)
		if !ok || len(m.Methods) > 0 {
			return a.refused(p + " (:method matches one exact method)")
		}
		m.Methods = []string{s}
		return nil
	}
	if name[0] == ':' {
		return a.refused(p + ".name (pseudo-headers other than :method)")
	}
	if m.Headers == nil {
		m.Headers = map[string]any{}
	}
	key := strings.ToLower(name)
	if _, dup := m.Headers[key]; dup {
		return a.refused(p + " (a second matcher on one field)")
	}
	m.Headers[key] = v
	return nil
}

// action maps a RouteAction: its cluster, its prefix rewrite, and what
// goes on the upstream (routeUpstream).
func (a at) action(ra *routev3.RouteAction, p string, m *routev3.RouteMatch) (*Proxy, *routeRef, *Rewrite, error) {
	if err := a.known(ra, p, "cluster", "prefix_rewrite", "timeout", "retry_policy", "hash_policy"); err != nil {
		return nil, nil, nil, err
	}
	cluster := ra.GetCluster()
	if cluster == "" {
		return nil, nil, nil, a.invalid(p+".cluster", "missing (weighted_clusters and cluster_header are not supported)")
	}
	var rw *Rewrite
	if pr := ra.GetPrefixRewrite(); pr != "" {
		from := m.GetPrefix()
		if from == "" || pr[0] != '/' {
			return nil, nil, nil, a.refused(p + ".prefix_rewrite (needs a match.prefix, and a rewrite starting with '/')")
		}
		rw = &Rewrite{ReplacePrefix: &PrefixReplace{From: from, To: pr}}
	}
	var pol routeUpstream
	if d := ra.GetTimeout(); d != nil {
		s, err := a.duration(d, p+".timeout")
		if err != nil {
			return nil, nil, nil, err
		}
		pol.total = s // 0s: Envoy's "no timeout"; the upstream's default stays
	}
	if rp := ra.GetRetryPolicy(); rp != nil {
		r, try, err := a.retry(rp, p+".retry_policy")
		if err != nil {
			return nil, nil, nil, err
		}
		pol.retries, pol.try = r, try
	}
	if hp := ra.GetHashPolicy(); len(hp) > 0 {
		k, err := a.hashKey(hp, p+".hash_policy")
		if err != nil {
			return nil, nil, nil, err
		}
		pol.hashKey = k
	}
	ref := &routeRef{cluster: cluster}
	if pol != (routeUpstream{}) {
		ref.policy = &pol
	}
	return &Proxy{Upstream: variantName(cluster, ref.policy)}, ref, rw, nil
}

// duration renders a protobuf duration as a Go duration ("" for zero).
func (a at) duration(d *durationpb.Duration, p string) (string, error) {
	if err := d.CheckValid(); err != nil || d.AsDuration() < 0 || d.AsDuration() > 24*time.Hour {
		return "", a.invalid(p, "must be 0-24h")
	}
	if d.AsDuration() == 0 {
		return "", nil
	}
	return d.AsDuration().String(), nil
}

// retryOn maps Envoy's retry_on conditions onto simdedge's.
var retryOn = map[string][]string{
	"5xx":                    {"5xx"},
	"gateway-error":          {"502", "503", "504"},
	"connect-failure":        {"connect_failure"},
	"reset":                  {"reset"},
	"retriable-status-codes": nil, // the codes come from retriable_status_codes
}

// retry maps a RetryPolicy onto upstreams[].retries and timeouts.try.
func (a at) retry(rp *routev3.RetryPolicy, p string) (*Retries, string, error) {
	if err := a.known(rp, p, "retry_on", "num_retries", "per_try_timeout", "retriable_status_codes", "retry_back_off"); err != nil {
		return nil, "", err
	}
	r := &Retries{}
	n := 1 // Envoy's default num_retries
	if v := rp.GetNumRetries(); v != nil {
		n = int(v.GetValue())
		if n > 10 {
			return nil, "", a.invalid(p+".num_retries", "must be 0-10")
		}
	}
	r.Attempts = &n
	on := []string{}
	for _, c := range strings.Split(rp.GetRetryOn(), ",") {
		c = strings.TrimSpace(c)
		if c == "" {
			continue
		}
		m, ok := retryOn[c]
		if !ok {
			return nil, "", a.refused(p + ".retry_on (condition " + safeName(c) + "; simdedge has 5xx, gateway-error, connect-failure, reset, retriable-status-codes)")
		}
		on = append(on, m...)
		if c == "retriable-status-codes" {
			for _, s := range rp.GetRetriableStatusCodes() {
				if s < 500 || s > 599 {
					return nil, "", a.invalid(p+".retriable_status_codes", "simdedge retries on 500-599 only")
				}
				on = append(on, strconv.Itoa(int(s)))
			}
		}
	}
	slices.Sort(on)
	r.On = slices.Compact(on)
	if len(r.On) == 0 {
		r.On = nil
		zero := 0
		r.Attempts = &zero // no condition: Envoy retries nothing
	}
	if b := rp.GetRetryBackOff(); b != nil {
		if err := a.known(b, p+".retry_back_off", "base_interval", "max_interval"); err != nil {
			return nil, "", err
		}
		s, err := a.duration(b.GetBaseInterval(), p+".retry_back_off.base_interval")
		if err != nil {
			return nil, "", err
		}
		r.Backoff = s
	}
	try := ""
	if d := rp.GetPerTryTimeout(); d != nil {
		s, err := a.duration(d, p+".per_try_timeout")
		if err != nil {
			return nil, "", err
		}
		try = s
	}
	return r, try, nil
}

// hashKey maps the first hash policy onto upstreams[].hash.key; simdedge
// hashes one key, so a second policy is refused.
func (a at) hashKey(hp []*routev3.RouteAction_HashPolicy, p string) (string, error) {
	if len(hp) > 1 {
		return "", a.refused(p + " (more than one hash policy)")
	}
	h := hp[0]
	p += "[0]"
	if err := a.known(h, p, "header", "cookie", "query_parameter", "connection_properties"); err != nil {
		return "", err
	}
	switch x := h.GetPolicySpecifier().(type) {
	case *routev3.RouteAction_HashPolicy_Header_:
		if err := a.known(x.Header, p+".header", "header_name"); err != nil {
			return "", err
		}
		return "header:" + x.Header.GetHeaderName(), nil
	case *routev3.RouteAction_HashPolicy_Cookie_:
		if err := a.known(x.Cookie, p+".cookie", "name"); err != nil {
			return "", err
		}
		return "cookie:" + x.Cookie.GetName(), nil
	case *routev3.RouteAction_HashPolicy_QueryParameter_:
		return "query:" + x.QueryParameter.GetName(), nil
	case *routev3.RouteAction_HashPolicy_ConnectionProperties_:
		if !x.ConnectionProperties.GetSourceIp() {
			return "", a.invalid(p+".connection_properties.source_ip", "must be true")
		}
		return "client_ip", nil
	}
	return "", a.invalid(p, "needs a policy")
}

// redirectCodes maps RedirectAction's response codes onto statuses.
var redirectCodes = map[routev3.RedirectAction_RedirectResponseCode]int{
	routev3.RedirectAction_MOVED_PERMANENTLY:  301,
	routev3.RedirectAction_FOUND:              302,
	routev3.RedirectAction_SEE_OTHER:          303,
	routev3.RedirectAction_TEMPORARY_REDIRECT: 307,
	routev3.RedirectAction_PERMANENT_REDIRECT: 308,
}

// redirect maps a RedirectAction onto a redirect template.
func (a at) redirect(rd *routev3.RedirectAction, p string) (*Redirect, error) {
	if err := a.known(rd, p, "https_redirect", "scheme_redirect", "host_redirect", "port_redirect", "path_redirect", "response_code", "strip_query"); err != nil {
		return nil, err
	}
	scheme := "{scheme}"
	if rd.GetHttpsRedirect() {
		scheme = "https"
	} else if s := rd.GetSchemeRedirect(); s != "" {
		if s != "http" && s != "https" {
			return nil, a.invalid(p+".scheme_redirect", `must be "http" or "https"`)
		}
		scheme = s
	}
	host := "{host}"
	if h := rd.GetHostRedirect(); h != "" {
		if !validHost(h) {
			return nil, a.invalid(p+".host_redirect", "must be a host name")
		}
		host = h
	}
	if port := rd.GetPortRedirect(); port != 0 {
		if rd.GetHostRedirect() == "" || port > 65535 {
			return nil, a.refused(p + ".port_redirect (only with host_redirect)")
		}
		host = net.JoinHostPort(host, strconv.Itoa(int(port)))
	}
	// {uri} is the path and, when the request has one, '?' and its
	// query; {path} the path alone.
	path := "{uri}"
	if rd.GetStripQuery() {
		path = "{path}"
	}
	if pr := rd.GetPathRedirect(); pr != "" {
		if pr[0] != '/' || strings.ContainsAny(pr, "{}?# ") {
			return nil, a.invalid(p+".path_redirect", "must be a path starting with '/' without '{', '}', '?', '#' or spaces")
		}
		if !rd.GetStripQuery() {
			return nil, a.refused(p + ".path_redirect (keeping the query: set strip_query)")
		}
		path = pr
	}
	to := scheme + "://" + host + path
	code := redirectCodes[rd.GetResponseCode()]
	if code == 0 {
		return nil, a.invalid(p+".response_code", "unknown code")
	}
	return &Redirect{To: to, Status: code}, nil
}
