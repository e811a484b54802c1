// Package trace holds the request-identity rules the engines share: request
// IDs (validation of a client's, generation of new ones) and W3C Trace
// Context (parsing traceparent, writing the edge's own span into it).
// Nothing here allocates, and nothing takes a lock per request: generated
// IDs come from a per-process random prefix and a per-connection counter,
// span IDs from the runtime's per-thread random source (math/rand/v2).
package trace
