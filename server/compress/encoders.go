package compress

import (
	"io"
	"sync"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/simdedge/simdedge/server"
)

// Default levels, chosen for an edge that compresses on the fly, where
// CPU per response matters more than the last percent of ratio:
//   - gzip 5: nginx's and Caddy's habits sit at 1-6; at 5 the klauspost
//     encoder's ratio on JSON is within a few percent of 9 at about
//     half its CPU (the speed target compares level 5 with
//     nginx's);
//   - br 4: Brotli's higher qualities (5+) switch to the slower
//     zopfli-like cost model; 4 compresses JSON better than gzip 5 and
//     this pure-Go encoder keeps up;
//   - zstd 3: zstd's own default (klauspost's SpeedDefault).
const (
	DefaultGzipLevel   = 5
	DefaultBrotliLevel = 4
	DefaultZstdLevel   = 3
)

// Level ranges each coding accepts.
const (
	minGzipLevel, maxGzipLevel     = gzip.BestSpeed, gzip.BestCompression // 1..9
	minBrotliLevel, maxBrotliLevel = brotli.BestSpeed, brotli.BestCompression
	minZstdLevel, maxZstdLevel     = 1, 22
)

// zstdWindow bounds a zstd encoder's window, and with it the encoder's
// memory (about twice the window) and the client's: each response being
// compressed holds one encoder, so 1 MiB keeps a thousand concurrent zstd
// responses near 2 GiB where the level's default 8 MiB would need 16;
// web responses rarely repeat across more than a megabyte. (Browsers
// refuse windows over 8 MiB, RFC 9659.)
const zstdWindow = 1 << 20

// pools holds one pool per coding and level for the process, so that
// reloads and routes with the same settings share warm encoders.
var (
	poolsMu sync.Mutex
	pools   = map[poolKey]*sync.Pool{}
)

type poolKey struct {
	coding string
	level  int
}

func poolFor(coding string, level int) *sync.Pool {
	poolsMu.Lock()
	defer poolsMu.Unlock()
	k := poolKey{coding, level}
	if p := pools[k]; p != nil {
		return p
	}
	p := &sync.Pool{}
	switch coding {
	case "gzip":
		p.New = func() any {
			zw, _ := gzip.NewWriterLevel(nil, level) // level validated
			return &gzipEnc{zw: zw, pool: p}
		}
	case "br":
		p.New = func() any {
			return &brotliEnc{bw: brotli.NewWriterLevel(nil, level), pool: p}
		}
	case "zstd":
		p.New = func() any {
			// Concurrency 1: the encoder compresses in Write on the
			// caller's goroutine (the loop's), never in goroutines
			// of its own.
			zw, _ := zstd.NewWriter(nil,
				zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(level)),
				zstd.WithEncoderConcurrency(1),
				zstd.WithWindowSize(zstdWindow),
				zstd.WithLowerEncoderMem(true))
			return &zstdEnc{zw: zw, pool: p}
		}
	}
	pools[k] = p
	return p
}

type gzipEnc struct {
	zw   *gzip.Writer
	pool *sync.Pool
}

func (e *gzipEnc) Coding() string              { return "gzip" }
func (e *gzipEnc) Reset(dst io.Writer)         { e.zw.Reset(dst) }
func (e *gzipEnc) Write(p []byte) (int, error) { return e.zw.Write(p) }
func (e *gzipEnc) Flush() error                { return e.zw.Flush() }
func (e *gzipEnc) Close() error                { return e.zw.Close() }
func (e *gzipEnc) Release() {
	e.zw.Reset(io.Discard) // drop the reference to the response
	e.pool.Put(e)
}

type brotliEnc struct {
	bw   *brotli.Writer
	pool *sync.Pool
}

func (e *brotliEnc) Coding() string              { return "br" }
func (e *brotliEnc) Reset(dst io.Writer)         { e.bw.Reset(dst) }
func (e *brotliEnc) Write(p []byte) (int, error) { return e.bw.Write(p) }
func (e *brotliEnc) Flush() error                { return e.bw.Flush() }
func (e *brotliEnc) Close() error                { return e.bw.Close() }
func (e *brotliEnc) Release() {
	e.bw.Reset(io.Discard)
	e.pool.Put(e)
}

type zstdEnc struct {
	zw   *zstd.Encoder
	pool *sync.Pool
}

func (e *zstdEnc) Coding() string              { return "zstd" }
func (e *zstdEnc) Reset(dst io.Writer)         { e.zw.Reset(dst) }
func (e *zstdEnc) Write(p []byte) (int, error) { return e.zw.Write(p) }
func (e *zstdEnc) Flush() error                { return e.zw.Flush() }
func (e *zstdEnc) Close() error                { return e.zw.Close() }
func (e *zstdEnc) Release() {
	e.zw.Reset(nil)
	e.pool.Put(e)
}

var (
	_ server.BodyEncoder = (*gzipEnc)(nil)
	_ server.BodyEncoder = (*brotliEnc)(nil)
	_ server.BodyEncoder = (*zstdEnc)(nil)
)
