package url

import "unsafe"

// stringBytes views s as a byte slice without copying. Callers never write
// to the result: it is only passed to read-only asm kernels.
func stringBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// bytesString views b as a string without copying. The caller must not
// modify b while the string is in use.
func bytesString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// arrayBytes views the array *a (a byte array of any length) as a byte
// slice of its full length. newBlock uses it to point a URL's href at the
// array allocated with it.
func arrayBytes[A any](a *A) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(a)), unsafe.Sizeof(*a))
}
