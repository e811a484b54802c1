// Package router chooses a handler for each request by host (exact, or
// "*.suffix"; case, port and a trailing dot do not matter, and an
// absolute-form target's authority wins over Host), path (exact, prefix,
// or a regex), method, header fields and query parameters (matchers.go);
// the first route in order that accepts a request serves it. "OPTIONS *"
// and CONNECT are answered, not routed (server.SpecialTarget). A route's
// Policy rewrites the path and the request's and responses' header fields
// (policy.go, with server/rewrite). It also provides the built-in actions:
// a fixed response (Respond), Redirect, and Echo, which answers with JSON
// describing the parsed request (after the route's rewrites).
//
// Tables and Switches are server.Routers: the server looks a request's
// route up once and gets its plan (server.Plan), the route's steps (Gate,
// HSTS, Compress, the Policy's rewrites) as values and its action. Every
// engine runs that plan: on the event-loop engine, requests whose route is
// Respond, Echo, Redirect or files (or that no route matches) are answered
// on the loop, those routed to a proxy are forwarded by the loop when
// server.Options.LoopProxy is on, and those routed to a Go handler (or
// whose credentials need bcrypt or an auth service) move their connection
// to a goroutine.
//
// A Table is immutable once built: a configuration reload builds a new
// Table and swaps it into a Switch atomically, so requests in flight finish
// on the table they started with and none ever sees half a configuration.
package router
