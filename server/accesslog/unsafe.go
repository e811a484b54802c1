package accesslog

import "unsafe"

// bytesOf views a string's bytes without copying; the formatters only read
// them.
func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }
