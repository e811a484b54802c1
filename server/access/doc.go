// Package access holds the gatekeeping policy of routes and listeners,
// written once for every engine: sets of CIDR prefixes (trusted proxies,
// allow and deny lists), the client address behind trusted proxies
// (X-Forwarded-For), and HTTP Basic credentials checked against bcrypt
// hashes with a bounded cache. It imports nothing of the server, so the
// engines and the router call it alike (internal/layers).
package access
