// Package url parses URLs as the WHATWG URL Standard specifies (browsers and Node), not RFC 3986.
package url
