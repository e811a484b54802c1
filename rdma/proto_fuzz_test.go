package rdma

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzParseHeader: any bytes either decode to a header that encodes back to
// the same bytes, or fail with a sentinel wrapped in ErrProtocol; never a
// panic.
func FuzzParseHeader(f *testing.F) {
	f.Add(encodeMsg(header{kind: kindRequest, id: 1, credits: 2}, []byte("GET / HTTP/1.1\r\n\r\n")))
	f.Add(encodeMsg(header{kind: kindCredit, credits: 8}, nil))
	adv := make([]byte, descriptorSize+3)
	(&descriptor{addr: 4096, length: 1 << 20, key: 7}).put(adv)
	f.Add(encodeMsg(header{kind: kindAdvert, flags: flagMore, id: 3}, adv))
	f.Add(encodeMsg(header{kind: kindError, id: 3}, []byte{2, 0, 0, 0}))
	f.Add(encodeMsg(header{kind: kindRequest, flags: flagEnvelope, id: 4}, []byte("\x10\x00\x00\x00SEDG")))
	f.Add(encodeMsg(header{kind: kindAdvert, flags: flagEnvelope, id: 5}, adv))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := parseHeader(b)
		if err != nil {
			if !errors.Is(err, ErrProtocol) {
				t.Fatalf("error %v not wrapped in ErrProtocol", err)
			}
			return
		}
		again := make([]byte, headerSize)
		h.put(again)
		if !bytes.Equal(again, b[:headerSize]) {
			t.Fatalf("re-encoded header %x differs from %x", again, b[:headerSize])
		}
		if h.flags&^allowedFlags[h.kind] != 0 {
			t.Fatalf("%v accepted with flags %#x", h.kind, h.flags)
		}
		switch h.kind {
		case kindAdvert:
			d, prefix := parseDescriptor(b)
			if d.length == 0 || len(prefix) != int(h.length)-descriptorSize {
				t.Fatalf("advert accepted with descriptor %+v and %d prefix bytes", d, len(prefix))
			}
		case kindError:
			if errorOf(b) == nil {
				t.Fatal("error message accepted without a known code")
			}
		}
	})
}
