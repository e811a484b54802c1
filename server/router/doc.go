// Package router chooses a handler for each request by host (exact, or
// "*.suffix"), path (exact, or prefix) and method, and provides the
// built-in actions: a fixed response (Respond) and Echo, which answers with
// JSON describing the parsed request.
//
// A Table is immutable once built: a configuration reload builds a new
// Table and swaps it into a Switch atomically, so requests in flight finish
// on the table they started with and none ever sees half a configuration.
package router
