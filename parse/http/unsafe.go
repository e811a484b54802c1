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

// The fast field walk (fields_fast.go) reads bytes and cuts views at
// offsets it has already bounded by the classified window's end, which
// never passes len(b); these two skip the compiler's repeated checks
// there. Nothing else uses them.

// byteAt returns b[i]; the caller guarantees 0 <= i < len(b).
func byteAt(b []byte, i int) byte {
	return *(*byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(b)), i))
}

// view returns b[i:j:j]; the caller guarantees 0 <= i <= j <= len(b).
func view(b []byte, i, j int) []byte {
	return unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(b)), i)), j-i)
}
