// Package discover is service discovery without a control plane: it
// resolves the host names of an upstream's targets (A and AAAA records) and
// dns+srv:// targets (SRV records: host, port and weight) into the
// addresses a pool balances over, and re-resolves them when their answer's
// TTL runs out, or on an interval where the resolver gives no TTL (the
// system resolver). A Watcher reports a changed answer; server/config then
// rebuilds the upstream with the previous one as its Previous, exactly as a
// reload does, so targets that stay keep their pooled connections and
// health state and targets that left drain.
//
// It does network I/O (DNS queries) on its own goroutines, never on an
// event loop; the policy packages it feeds (server/upstream) do none.
package discover
