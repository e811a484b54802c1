// Package ratelimit is the token-bucket rate limiter of routes
// (rate_limit: {key, rate, burst}), written once for every engine: the
// event loop calls it inline, goroutines call it the same way.
//
// A Limiter keeps one bucket per key (a client address, or a header's
// value) in a table of fixed capacity, split into shards with a mutex
// each: a lookup locks one shard for a map lookup and a few arithmetic
// operations, so loops and goroutines contend only when they hit the same
// shard at the same instant. When a shard is full its least recently used
// key is evicted, so a flood of distinct keys costs a bounded amount of
// memory (and evicts real clients' buckets, which start again full: the
// price of the bound, as with nginx's limit_req zone when it runs out).
//
// Limits are per instance: each simdedge process counts only the requests
// it sees, so N instances behind a balancer let through up to N times the
// rate. A reload builds new limiters (buckets start full).
package ratelimit
