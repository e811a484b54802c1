package json

import "unsafe"

// bytesToString views b as a string for strconv calls that do not retain
// it. This is the package's only use of unsafe.
func bytesToString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
