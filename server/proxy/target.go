package proxy

import (
	phttp "github.com/simdedge/simdedge/parse/http"
)

// Request targets as forwarded (RFC 9112 §3.2). An origin-form target
// ("/x?q") goes unchanged. An absolute-form one ("http://public.example/x")
// is routed by its authority, which wins over the Host field (§3.2.2), so
// the upstream must see that authority too: the proxy forwards the
// origin-form ("/x") with Host set from the target's authority, never the
// received Host (which may name another host: "Host: admin.internal").
// The asterisk and authority forms never reach an upstream: the proxy
// answers them (server.SpecialTarget).

// asteriskTarget is what an OPTIONS whose absolute-form target has an
// empty path and no query is forwarded as (RFC 9112 §3.2.4).
var asteriskTarget = []byte("*")

// rootPath is the path forwarded when an absolute-form target has an
// empty one (RFC 9112 §3.2.1: "/" must be sent).
const rootPath = "/"

// splitAbsolute splits an absolute-form http or https target into its
// authority and the rest (path and query; the fragment, never sent in a
// request, is cut off). ok is false for an origin-form target, and for an
// absolute-form target the proxy cannot forward: another scheme, or no
// authority (the parser rejects a missing http(s) authority and userinfo).
func splitAbsolute(target []byte) (authority, rest []byte, ok bool) {
	if len(target) == 0 || target[0] == '/' {
		return nil, nil, false
	}
	var after []byte
	switch {
	case len(target) > len("http://") && phttp.EqualFold(target[:len("http://")], "http://"):
		after = target[len("http://"):]
	case len(target) > len("https://") && phttp.EqualFold(target[:len("https://")], "https://"):
		after = target[len("https://"):]
	default:
		return nil, nil, false
	}
	end := 0
	for end < len(after) && after[end] != '/' && after[end] != '?' && after[end] != '#' {
		end++
	}
	if end == 0 {
		return nil, nil, false
	}
	authority, rest = after[:end], after[end:]
	for i, c := range rest {
		if c == '#' {
			rest = rest[:i]
			break
		}
	}
	return authority, rest, true
}

// forwardableTarget reports whether the proxy can forward head's target:
// origin form, or an http(s) absolute form with an authority. Anything
// else gets 400 (the asterisk and authority forms are answered before).
func forwardableTarget(head *phttp.Request) bool {
	t := head.Target
	if len(t) > 0 && t[0] == '/' {
		return true
	}
	_, _, ok := splitAbsolute(t)
	return ok
}

// appendTarget appends the target to forward (origin form) and returns
// the authority that must replace Host, nil for an origin-form target.
func appendTarget(b []byte, head *phttp.Request) ([]byte, []byte) {
	authority, rest, ok := splitAbsolute(head.Target)
	if !ok {
		return append(b, head.Target...), nil
	}
	switch {
	case len(rest) == 0 && string(head.Method) == "OPTIONS":
		b = append(b, asteriskTarget...)
	case len(rest) == 0 || rest[0] == '?':
		b = append(b, rootPath...)
		b = append(b, rest...)
	default:
		b = append(b, rest...)
	}
	return b, authority
}
