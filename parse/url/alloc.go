package url

import "sync"

// One allocation per Parse: the URL and its href buffer live in one heap
// object, a urlBlock, whose array is the buffer. href points into the
// block itself, which keeps the whole block alive as long as the URL or
// any string from its getters is reachable; a later ParseInto or setter
// that outgrows the array simply moves href to a buffer of its own.
type urlBlock[A any] struct {
	u   URL
	buf A
}

func newBlock[A any]() *URL {
	b := new(urlBlock[A])
	b.u.href = arrayBytes(&b.buf)[:0]
	return &b.u
}

// blockSizes lists the blocks newURL picks from, smallest first, each
// sized so that the whole block fills one of the Go allocator's size
// classes (runtime/sizeclasses.go): with the 80-byte URL, every 16-byte
// class up to 256 bytes (where nearly all URLs fall), then coarser steps.
// Objects with pointers above 512 bytes carry an 8-byte malloc header,
// hence the "- 8" from there on. A test checks the URL's size the
// arithmetic assumes.
var blockSizes = [...]struct {
	href  int
	alloc func() *URL
}{
	{128 - urlSize, newBlock[[128 - urlSize]byte]},
	{144 - urlSize, newBlock[[144 - urlSize]byte]},
	{160 - urlSize, newBlock[[160 - urlSize]byte]},
	{176 - urlSize, newBlock[[176 - urlSize]byte]},
	{192 - urlSize, newBlock[[192 - urlSize]byte]},
	{208 - urlSize, newBlock[[208 - urlSize]byte]},
	{224 - urlSize, newBlock[[224 - urlSize]byte]},
	{240 - urlSize, newBlock[[240 - urlSize]byte]},
	{256 - urlSize, newBlock[[256 - urlSize]byte]},
	{320 - urlSize, newBlock[[320 - urlSize]byte]},
	{384 - urlSize, newBlock[[384 - urlSize]byte]},
	{512 - urlSize, newBlock[[512 - urlSize]byte]},
	{768 - urlSize - mallocHeader, newBlock[[768 - urlSize - mallocHeader]byte]},
	{1024 - urlSize - mallocHeader, newBlock[[1024 - urlSize - mallocHeader]byte]},
	{2048 - urlSize - mallocHeader, newBlock[[2048 - urlSize - mallocHeader]byte]},
	{4096 - urlSize - mallocHeader, newBlock[[4096 - urlSize - mallocHeader]byte]},
	{8192 - urlSize - mallocHeader, newBlock[[8192 - urlSize - mallocHeader]byte]},
	{16384 - urlSize - mallocHeader, newBlock[[16384 - urlSize - mallocHeader]byte]},
	{32768 - urlSize - mallocHeader, newBlock[[32768 - urlSize - mallocHeader]byte]},
}

const (
	// urlSize is unsafe.Sizeof(URL{}) on 64-bit platforms
	// (TestURLBlockSizes checks it).
	urlSize = 80
	// mallocHeader is the Go allocator's per-object type header for
	// objects with pointers larger than 512 bytes (runtime.mallocHeaderSize).
	mallocHeader = 8
	// maxBlockHref is the longest href that shares its URL's allocation;
	// beyond it (32 KiB, the allocator's largest size class) the URL and
	// the href are two allocations.
	maxBlockHref = 32768 - urlSize - mallocHeader
)

// newURL returns a zero URL whose href is empty with capacity at least n,
// in one allocation when n <= maxBlockHref. The blocks up to 256 bytes,
// where nearly all URLs fall, are picked by a switch on the 16-byte class
// (direct calls, which the compiler inlines, instead of blockSizes' func
// values), the rest from blockSizes; TestURLBlockSizes checks that both
// pick the same block for every length.
func newURL(n int) *URL {
	switch (n + urlSize + 15) / 16 {
	case 0, 1, 2, 3, 4, 5, 6, 7, 8:
		return newBlock[[128 - urlSize]byte]()
	case 9:
		return newBlock[[144 - urlSize]byte]()
	case 10:
		return newBlock[[160 - urlSize]byte]()
	case 11:
		return newBlock[[176 - urlSize]byte]()
	case 12:
		return newBlock[[192 - urlSize]byte]()
	case 13:
		return newBlock[[208 - urlSize]byte]()
	case 14:
		return newBlock[[224 - urlSize]byte]()
	case 15:
		return newBlock[[240 - urlSize]byte]()
	case 16:
		return newBlock[[256 - urlSize]byte]()
	}
	for _, s := range blockSizes {
		if n <= s.href {
			return s.alloc()
		}
	}
	return &URL{href: make([]byte, 0, n)}
}

// newURLFrom returns a new URL with components c and a copy of href, in
// one allocation (newURL).
func newURLFrom(c *components, href []byte) *URL {
	u := newURL(len(href))
	u.components = *c
	u.inputHref = false
	u.href = u.href[:len(href)]
	copy(u.href, href)
	return u
}

// recordPool holds the state machine's records for Parse and CanParse,
// whose URLs (new or none) have no record of their own to reuse.
var recordPool = sync.Pool{New: func() any { return new(record) }}

func getRecord() *record  { return recordPool.Get().(*record) }
func putRecord(r *record) { recordPool.Put(r) }
