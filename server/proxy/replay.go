package proxy

import (
	phttp "github.com/simdedge/simdedge/parse/http"
	"github.com/simdedge/simdedge/server/upstream"
)

// The resend rule. A request whose exchange failed before any response
// byte arrived may be sent again (on another connection) only when doing
// so cannot make the upstream act on it twice, or the client has said
// that this is safe:
//
//   - not one byte of it was written: the upstream cannot have seen it;
//   - its method is idempotent (RFC 9110 §9.2.2) and the whole body is
//     still held, so the same request can be sent again;
//   - it carries an Idempotency-Key field (the IETF httpapi draft): the
//     client asks the server to run it at most once per key, so the
//     upstream detects a repeat (the body must still be held).
//
// "Written" means accepted by the kernel: a write that succeeded on a
// connection the upstream had already closed counts, since the upstream
// may have read the request before closing (it is the case that ran POSTs
// twice). The attempt driver (upstream.Attempt) applies the rule for
// every path, on a stale pooled connection and in the retry policy
// (budgets, backoff, which failures), which decides when to retry among
// what this allows; mayResend is the same rule for the goroutine proxy's
// choice to probe a pooled connection first (proxy.go).

// idempotencyKeyField names the request field by which a client makes a
// non-idempotent request safe to repeat.
const idempotencyKeyField = "Idempotency-Key"

// mayResend reports whether the request head may be sent again after a
// failure before any response byte arrived. written: at least one byte of
// the request was accepted by the kernel. replayable: the whole body (if
// any) is still held, so it can be sent again unchanged. The rule itself
// is upstream.MayResend (one copy for every engine and for the retry
// policy); a body no longer held can never go again, whatever the key.
func mayResend(head *phttp.Request, written, replayable bool) bool {
	return replayable && upstream.MayResend(written, upstream.IdempotentMethod(head.Method), true, hasIdempotencyKey(head))
}

// hasIdempotencyKey reports whether the request carries the field.
func hasIdempotencyKey(head *phttp.Request) bool {
	return head.Headers.Index(idempotencyKeyField, 0) >= 0
}
