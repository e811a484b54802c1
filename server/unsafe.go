package server

import "unsafe"

// bytesView returns b as a string without copying, for APIs that take a
// string and do not keep it (url.ParseInto copies into its own buffer).
// The caller must not change b while the string is in use.
func bytesView(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}
