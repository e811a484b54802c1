// Package server is simdedge's serving core: connection loops over stream and message transports, the router, handlers and the reverse proxy.
package server
