package server

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
)

// TestH2OutWrites: h2out passes on every byte in order, whatever the
// sizes of the writes (under the small buffer, across it, over the full
// one) and when it is released between flushes; a failed write is sticky.
func TestH2OutWrites(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var dst, want bytes.Buffer
	b := h2out{dst: &dst}
	for i := 0; i < 300; i++ {
		p := make([]byte, []int{0, 1, 9, h2WriteSmall - 1, h2WriteSmall + 1, h2WriteBuf, h2WriteBuf + 5, rng.IntN(3 * h2WriteBuf)}[rng.IntN(8)])
		for j := range p {
			p[j] = byte(rng.Uint32())
		}
		if n, err := b.Write(p); n != len(p) || err != nil {
			t.Fatalf("write %d: %d, %v", len(p), n, err)
		}
		want.Write(p)
		if rng.IntN(3) == 0 {
			if err := b.Flush(); err != nil {
				t.Fatal(err)
			}
			b.release()
			if b.buf != nil {
				t.Fatal("flushed buffer not released")
			}
		}
	}
	if err := b.Flush(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(dst.Bytes(), want.Bytes()) {
		t.Fatalf("%d bytes out, want %d (or different)", dst.Len(), want.Len())
	}
	errBroken := errors.New("broken")
	f := h2out{dst: failWriter{errBroken}}
	f.Write([]byte("abc"))
	if err := f.Flush(); !errors.Is(err, errBroken) {
		t.Fatalf("flush: %v", err)
	}
	if _, err := f.Write([]byte("d")); !errors.Is(err, errBroken) {
		t.Fatalf("write after a failed flush: %v", err)
	}
	f.release()
	if f.buf == nil {
		t.Fatal("a buffer with unsent bytes was released")
	}
}

type failWriter struct{ err error }

func (w failWriter) Write([]byte) (int, error) { return 0, w.err }

// TestH2InReads: h2in hands on every byte in order, whatever the sizes of
// the source's reads and of the caller's, with its buffer released
// between reads (the bytes that end the wait then go straight to the
// caller).
func TestH2InReads(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	src := make([]byte, 1<<20)
	for i := range src {
		src[i] = byte(rng.Uint32())
	}
	b := h2in{hc: &h2conn{}, src: &chunkReader{b: src, rng: rng}}
	var got []byte
	for len(got) < len(src) {
		p := make([]byte, 1+rng.IntN(2*h2ReadBuf))
		n, err := b.Read(p)
		if err != nil {
			t.Fatalf("after %d bytes: %v", len(got), err)
		}
		got = append(got, p[:n]...)
		if rng.IntN(4) == 0 {
			b.release() // only if empty
		}
	}
	if !bytes.Equal(got, src) {
		t.Fatal("bytes differ")
	}
	if n, err := b.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Fatalf("at the end: %d, %v", n, err)
	}
}

// chunkReader reads b in pieces of random sizes.
type chunkReader struct {
	b   []byte
	rng *rand.Rand
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), 1+r.rng.IntN(40000))], r.b)
	r.b = r.b[n:]
	return n, nil
}
