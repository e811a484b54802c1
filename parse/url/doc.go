// Package url parses URLs as the WHATWG URL Standard specifies
// (https://url.spec.whatwg.org/), the way browsers and Node do, not as
// RFC 3986 and net/url do: "HTTP://EXAMPLE.com:80/a/./b/../c" becomes
// "http://example.com/a/c", hosts go through IDNA and the IPv4/IPv6
// parsers, backslashes count as slashes in special URLs, and so on.
//
// # Representation
//
// A URL holds one normalized href buffer plus uint32 offsets of its
// components, after Ada's url_aggregator (github.com/ada-url/ada). Getters
// (Href, Protocol, Username, Password, Host, Hostname, Port, Pathname,
// Search, Hash, Origin) return views into that buffer without copying; see
// URL for how long they stay valid.
//
// # Parsing
//
// Parse allocates a new URL; ParseInto reuses one and allocates nothing in
// steady state (also on failure); CanParse only validates. Parsing first
// tries a fast path for plain absolute http(s) URLs; everything else runs
// the standard's state machine (parser.go, one case per state, each citing
// its section). The fast path is fuzzed for agreement with the state
// machine (FuzzFastPath).
//
// SIMD kernels from package asm strip tabs and newlines, lowercase hosts,
// and percent-encode: the encoder classifies 64 bytes at a time against
// the component's percent-encode set, computes each byte's output position
// with a prefix sum over output widths (1 or 3), and writes branch-free.
//
// # Setters and search parameters
//
// SetHref, SetProtocol, SetUsername, SetPassword, SetHost, SetHostname,
// SetPort, SetPathname, SetSearch and SetHash follow the standard's setter
// semantics. SearchParams is URLSearchParams: the
// application/x-www-form-urlencoded parser and serializer.
//
// # Errors
//
// Failures are reported as *Error{Op, Input, Err} wrapping one of the
// package's sentinel errors (ErrInvalidPort, ErrInvalidHost, ...). Error
// strings never contain the input.
//
// # Conformance
//
// The tests run the web-platform-tests data vendored under testdata/wpt:
// urltestdata.json, setters_tests.json, percent-encoding.json all pass.
// toascii.json and IdnaTestV2.json pass in part, because non-ASCII domains
// go through the package's own partial UTS #46 implementation (see
// idna.go for what it lacks and why).
package url
