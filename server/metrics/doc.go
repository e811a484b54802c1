// Package metrics holds the server's counters: per route (requests by
// method and status class, a duration histogram, bytes in and out) and per
// server (connections, refusals, parse errors). It has no dependency on a
// metrics library: the admin package reads the counters at scrape time and
// publishes them (Prometheus), so the server core never imports
// client_golang.
//
// Counting stays off shared cache lines: every counter block is split into
// shards, each padded to whole cache lines, and a connection counts into
// the shard it was given when accepted (Set.Shard, a cheap rotating
// index). Two connections share a shard only when there are more busy
// connections than shards, and even then they contend only if they finish a
// request at the same moment. Readers sum the shards; a scrape sees each
// counter monotonic, though not all counters at one instant.
//
// Routes get their counter block when the routing table is built (Set.Route,
// by name, so that a reload keeps the counts of routes that remain); the
// hot path never looks a name up.
package metrics
