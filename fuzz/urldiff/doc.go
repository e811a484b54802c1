// Package urldiff fuzzes parse/url against nlnwa/whatwg-url (another Go
// WHATWG implementation) and net/url (RFC 3986).
package urldiff
