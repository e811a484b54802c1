// Package bench measures simdedge against its peers. It is a module of its
// own so that the peers (fasthttp, nlnwa/whatwg-url, fastjson, ...) never
// enter the main module's go.mod.
package bench
