// Package wrkout parses the summary that wrk (github.com/wg/wrk) prints with
// --latency: completed requests, duration, requests per second, the latency
// distribution (50/75/90/99 %), socket errors and non-2xx responses.
package wrkout
