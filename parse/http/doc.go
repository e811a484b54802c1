// Package http parses HTTP/1.1 requests and responses (RFC 9110, RFC 9112) into zero-copy views, strictly.
package http
