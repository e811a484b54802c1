package http

import "unsafe"

// bytesString views b as a string without copying. The caller must not
// change b while the string is in use: ResolveTarget passes it to
// url.ParseInto, which copies what it keeps.
func bytesString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// rebase returns the slice of dst at the offset sub has in src, for views
// taken from src (Clone moves them to a copy). A nil or empty sub stays
// as is.
func rebase(dst, src, sub []byte) []byte {
	if len(sub) == 0 {
		return sub
	}
	off := int(uintptr(unsafe.Pointer(unsafe.SliceData(sub))) - uintptr(unsafe.Pointer(unsafe.SliceData(src))))
	return dst[off : off+len(sub) : off+len(sub)]
}
