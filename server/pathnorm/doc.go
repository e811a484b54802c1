// Package pathnorm normalises the path of a request target before any rule
// matches it (issue 27): the edge must decide on the path as the backend
// will read it, or a deny rule on "/admin/" lets "/pub/../admin/x",
// "//admin/x" and "/%61dmin/x" through to a backend that normalises them.
//
// It is policy, in the sense of ARCHITECTURE.md: every engine (goroutine,
// event loop, HTTP/2 streams, message transports) calls the one Target
// function where the request's target is fixed, before the route lookup,
// and forwards what it returns. It sits in server, not in parse/http or
// parse/url: the parsers report what was sent, exactly (parse/url follows
// the WHATWG standard, which merges no slashes and decodes nothing), while
// merging slashes and the treatment of "%2F" are the operator's choices
// (Options), as in Envoy's normalize_path, merge_slashes and
// path_with_escaped_slashes_action.
//
// The steps, in order, on the path only (up to '?'; the query is copied
// unchanged):
//  1. percent-encoded unreserved characters (RFC 3986 §2.3: ALPHA, DIGIT,
//     "-", ".", "_", "~") are decoded, and the hex digits of every other
//     escape are upper-cased (§6.2.2.1), so that one resource has one
//     spelling; "%2F" and "%5C" follow Options.EscapedSlashes; a '%' not
//     followed by two hex digits is left as it is;
//  2. unless Options.KeepSlashes, runs of '/' become one, as nginx's
//     merge_slashes and Go's path.Clean do;
//  3. dot segments are removed (RFC 3986 §5.2.4), also those that were
//     "%2e" before step 1. A ".." at the root stays at the root.
//
// A trailing slash is kept ("/a/b/" stays, "/a/." becomes "/a/"): unlike
// path.Clean, a directory and a file are different resources to a backend.
package pathnorm
