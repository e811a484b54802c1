package server

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"golang.org/x/net/http2/hpack"
)

// TestHPACKStaticTable: every entry of hpackStatic is what x/net's
// decoder reads for its index, as a whole field and as a name.
func TestHPACKStaticTable(t *testing.T) {
	d := hpack.NewDecoder(4096, nil)
	for i := 1; i <= len(hpackStatic); i++ {
		want := hpackStatic[i-1]
		var e hpackEnc
		e.int(0x80, 7, i)
		fs, err := d.DecodeFull(e.buf)
		if err != nil || len(fs) != 1 || fs[0].Name != want[0] || fs[0].Value != want[1] {
			t.Fatalf("index %d: %v %v, want %q", i, fs, err, want)
		}
		e.buf = e.buf[:0]
		e.literal(0x00, 4, i, "", "v")
		if fs, err = d.DecodeFull(e.buf); err != nil || len(fs) != 1 || fs[0].Name != want[0] {
			t.Fatalf("name index %d: %v %v, want %q", i, fs, err, want[0])
		}
		if got := hpackStaticName(want[0]); hpackStatic[got-1][0] != want[0] || got > i {
			t.Fatalf("hpackStaticName(%q) = %d", want[0], got)
		}
	}
	if hpackStaticName("x-unknown") != 0 || hpackStaticName(strings.Repeat("a", 40)) != 0 || hpackStatus("201") != 0 {
		t.Fatal("a name or status outside the table was found in it")
	}
}

// hpackCheck decodes each block the encoder writes with x/net's decoder,
// which follows the peer's SETTINGS_HEADER_TABLE_SIZE as a client would,
// and fails t when a field comes back different.
type hpackCheck struct {
	t   testing.TB
	enc hpackEnc
	dec *hpack.Decoder
}

func newHPACKCheck(t testing.TB) *hpackCheck {
	c := &hpackCheck{t: t, dec: hpack.NewDecoder(4096, nil)}
	c.enc.init()
	return c
}

// settings is the peer sending SETTINGS_HEADER_TABLE_SIZE v.
func (c *hpackCheck) settings(v uint32) {
	c.dec.SetAllowedMaxDynamicTableSize(v)
	c.enc.setPeerMax(v)
}

// block encodes fields as one section and checks the decoded list; it
// returns the section's length.
func (c *hpackCheck) block(fields [][2]string) int {
	c.t.Helper()
	c.enc.begin()
	for _, f := range fields {
		c.enc.field(f[0], f[1])
	}
	got, err := c.dec.DecodeFull(c.enc.buf)
	if err != nil {
		c.t.Fatalf("decoding %v: %v", fields, err)
	}
	if len(got) != len(fields) {
		c.t.Fatalf("decoded %d fields, want %d: %v", len(got), len(fields), got)
	}
	for i, f := range fields {
		if got[i].Name != f[0] || got[i].Value != f[1] || got[i].Sensitive != (f[0] == "set-cookie") {
			c.t.Fatalf("field %d: %v, want %q", i, got[i], f)
		}
	}
	if c.enc.size > c.enc.max || c.enc.max > hpackEncMax {
		c.t.Fatalf("table of %d bytes, max %d", c.enc.size, c.enc.max)
	}
	return len(c.enc.buf)
}

// TestHPACKEncRepeats: a response's repeating fields cost one byte each
// from their second time on, the volatile ones never enter the table, and
// a new date takes the old one's place without losing the others.
func TestHPACKEncRepeats(t *testing.T) {
	c := newHPACKCheck(t)
	head := func(date, clen string) [][2]string {
		return [][2]string{{":status", "200"}, {"date", date}, {"content-type", "text/plain"}, {"x-served-by", "edge"}, {"content-length", clen}}
	}
	first := c.block(head("Sat, 28 Nov 2026 10:00:00 GMT", "3"))
	if n := c.block(head("Sat, 28 Nov 2026 10:00:00 GMT", "12")); n != 4+5 {
		// :status, date, content-type, x-served-by: one byte each;
		// content-length: its name index (28, two bytes with a 4-bit
		// prefix), the length and two digits.
		t.Fatalf("second head: %d bytes, want 9 (first %d)", n, first)
	}
	for s := range 100 { // many seconds: each date evicts older entries
		c.block(head(fmt.Sprintf("Sat, 28 Nov 2026 10:01:%02d GMT", s%60), "3"))
	}
	if n := c.block(head("Sat, 28 Nov 2026 10:01:39 GMT", "3")); n != 4+4 {
		t.Fatalf("head after 100 dates: %d bytes, want 8", n)
	}
	for _, e := range c.enc.ents {
		if !hpackIndexes(e.name) {
			t.Fatalf("volatile field %q in the table", e.name)
		}
	}
	// Codes outside the static table are indexed like any field.
	c.block([][2]string{{":status", "302"}, {"location", "/a"}, {"set-cookie", "a=1"}})
	if n := c.block([][2]string{{":status", "302"}, {"location", "/b"}}); n != 1+2+1+2 {
		t.Fatalf("second 302: %d bytes", n)
	}
}

// TestHPACKEncPeerTableSize: the peer's SETTINGS_HEADER_TABLE_SIZE bounds
// the table, a reduction then an increase are both signalled (x/net's
// decoder rejects a block that grows its table past what it allowed), and
// a table of 0 indexes nothing.
func TestHPACKEncPeerTableSize(t *testing.T) {
	c := newHPACKCheck(t)
	fs := [][2]string{{":status", "200"}, {"content-type", "text/html"}, {"server", "simdedge"}}
	c.block(fs)
	c.settings(0)
	c.settings(4096)
	c.block(fs)
	c.settings(100)
	c.block(fs)
	if c.enc.max != 100 || c.enc.size > 100 {
		t.Fatalf("peer table 100: our max %d, size %d", c.enc.max, c.enc.size)
	}
	c.settings(0)
	c.block(fs)
	if n := c.block(fs); len(c.enc.ents) != 0 || n < 20 {
		t.Fatalf("peer table 0: %d entries, head %d bytes", len(c.enc.ents), n)
	}
	c.settings(65536)
	c.block(fs)
	if c.enc.max != hpackEncMax {
		t.Fatalf("peer table 65536: our max %d, want %d", c.enc.max, hpackEncMax)
	}
}

// TestHPACKEncRandom: random heads over many blocks, with table size
// changes between them, all decode to what was encoded.
func TestHPACKEncRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		c := newHPACKCheck(t)
		for range 200 {
			if r.IntN(20) == 0 {
				c.settings(uint32(r.IntN(5000)))
			}
			c.block(randomHead(r))
		}
	}
}

// randomHead draws a response head: statuses in and out of the static
// table, static and other names, repeating and changing values, some
// longer than the encoder indexes.
func randomHead(r *rand.Rand) [][2]string {
	names := []string{"content-type", "date", "server", "etag", "set-cookie", "x-a", "x-long-name-of-a-field", "content-length", "vary", "cache-control", "x-request-id"}
	statuses := []string{"200", "204", "404", "500", "201", "302", "503"}
	fs := [][2]string{{":status", statuses[r.IntN(len(statuses))]}}
	for range r.IntN(8) {
		v := fmt.Sprint(r.IntN(4))
		switch r.IntN(6) {
		case 0:
			v = strings.Repeat("v", r.IntN(300))
		case 1:
			v = ""
		}
		fs = append(fs, [2]string{names[r.IntN(len(names))], v})
	}
	return fs
}

// FuzzHPACKEnc: whatever the heads and table sizes, x/net's decoder reads
// back exactly the fields encoded.
func FuzzHPACKEnc(f *testing.F) {
	f.Add([]byte("\x00\x01a\x02bb\x10\x03ccc"), uint16(4096))
	f.Add([]byte("\xffdate\x00"), uint16(0))
	f.Fuzz(func(t *testing.T, b []byte, size uint16) {
		c := newHPACKCheck(t)
		if size != 4096 {
			c.settings(uint32(size))
		}
		// Each byte picks a field from a small pool, so that values
		// repeat; a byte >= 0xf0 ends the block, one of 0xff also
		// changes the table size.
		pool := []string{"content-type", "date", "server", "x-a", "set-cookie", "etag", ":status"}
		var fs [][2]string
		for i, x := range b {
			if x >= 0xf0 || i == len(b)-1 {
				c.block(append([][2]string{{":status", "200"}}, fs...))
				fs = fs[:0]
				if x == 0xff {
					c.settings(uint32(size) >> (i % 8))
				}
				continue
			}
			name := pool[int(x)%len(pool)]
			if name == ":status" {
				name = "x-status"
			}
			fs = append(fs, [2]string{name, strings.Repeat("v", int(x>>3))})
		}
	})
}

// hpackDecode runs our decoder over blocks, as a connection would, and
// returns each block's fields (as h2decode keeps them: the block's
// verdicts aside) or the index of the first block that failed.
func hpackDecodeOurs(blocks [][]byte, maxStr int) (out [][][2]string, failed int) {
	var d hpackDec
	d.init(h2TableSize, maxStr)
	for i, b := range blocks {
		var hd hpackRecorder
		if err := d.decode(b, &hd); err != nil {
			return out, i
		}
		out = append(out, hd.fields)
	}
	return out, -1
}

func hpackDecodeXNet(blocks [][]byte, maxStr int) (out [][][2]string, failed int) {
	d := hpack.NewDecoder(h2TableSize, nil)
	d.SetMaxStringLength(maxStr)
	for i, b := range blocks {
		fs, err := d.DecodeFull(b)
		if err != nil {
			return out, i
		}
		var got [][2]string
		for _, f := range fs {
			got = append(got, [2]string{f.Name, f.Value})
		}
		out = append(out, got)
	}
	return out, -1
}

// hpackRecorder keeps what the decoder emits.
type hpackRecorder struct{ fields [][2]string }

func (r *hpackRecorder) emit(name, value string, _ bool) bool {
	r.fields = append(r.fields, [2]string{strings.Clone(name), strings.Clone(value)})
	return true
}

// FuzzHPACKDec: our decoder and x/net's agree on every input, block by
// block: the same fields, or an error in the same block.
func FuzzHPACKDec(f *testing.F) {
	var e hpackEnc
	e.init()
	e.begin()
	for _, x := range randomHead(rand.New(rand.NewPCG(3, 4))) {
		e.field(x[0], x[1])
	}
	f.Add(append([]byte(nil), e.buf...), []byte{0x82, 0x86, 0x84, 0x41, 0x03, 'a', '.', 'b', 0xbe}, uint16(100))
	f.Add([]byte{0x3f, 0xe1, 0x1f, 0x82}, []byte{0x20, 0x82}, uint16(10))
	f.Add([]byte{0x40, 0x85, 0xf2, 0xb2, 0x4a, 0x87, 0xff, 0x82, 0x94, 0xe7}, []byte{0x82, 0x20}, uint16(4096))
	f.Fuzz(func(t *testing.T, a, b []byte, maxStr uint16) {
		if maxStr == 0 {
			maxStr = 1 // 0 means no limit to x/net
		}
		blocks := [][]byte{a, b, a}
		ours, of := hpackDecodeOurs(blocks, int(maxStr))
		theirs, tf := hpackDecodeXNet(blocks, int(maxStr))
		if of != tf {
			t.Fatalf("first failing block: ours %d, x/net %d (%q)", of, tf, blocks)
		}
		if fmt.Sprint(ours) != fmt.Sprint(theirs) {
			t.Fatalf("fields differ:\nours  %q\nx/net %q", ours, theirs)
		}
	})
}

// TestHPACKDecRoundTrip: what our encoder writes, with Huffman-coded
// literals from x/net's encoder in between, our decoder reads back.
func TestHPACKDecRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 20 {
		var buf bytes.Buffer
		xe := hpack.NewEncoder(&buf) // a connection's: its table is the decoder's
		var blocks [][]byte
		var want [][][2]string
		for range 100 {
			buf.Reset()
			head := randomHead(r)
			for _, x := range head {
				xe.WriteField(hpack.HeaderField{Name: x[0], Value: x[1]})
			}
			blocks = append(blocks, append([]byte(nil), buf.Bytes()...))
			want = append(want, head)
		}
		got, failed := hpackDecodeOurs(blocks, 1<<16)
		if failed >= 0 {
			t.Fatalf("block %d failed", failed)
		}
		for i := range want {
			if fmt.Sprint(got[i]) != fmt.Sprint(want[i]) {
				t.Fatalf("block %d: got %q, want %q", i, got[i], want[i])
			}
		}
	}
}

// TestHPACKEncRequestIDUnique: the request ID, under whatever name the
// configuration gives it, and Content-Length stay out of the table (they
// would push out the fields that repeat), and decode as sent.
func TestHPACKEncRequestIDUnique(t *testing.T) {
	c := newHPACKCheck(t)
	for i := range 3 {
		w := &ResponseWriter{status: 200, hasDate: true, rid: []byte(fmt.Sprint("id-", i)), ridName: "X-Correlation-Id"}
		c.enc.begin()
		w.encodeHead(&c.enc, 12)
		got, err := c.dec.DecodeFull(c.enc.buf)
		if err != nil || len(got) != 3 || got[1].Name != "x-correlation-id" || got[1].Value != fmt.Sprint("id-", i) || got[2].Value != "12" {
			t.Fatalf("head %d: %v %v", i, got, err)
		}
	}
	if len(c.enc.ents) != 0 {
		t.Fatalf("table holds %v, want nothing (the status is static)", c.enc.ents)
	}
}

// TestHPACKStaticSound: every static table entry passes the field checks
// that a vetted field skips (the decoder passes them as vetted).
func TestHPACKStaticSound(t *testing.T) {
	for i, e := range hpackStatic {
		if !h2ValidValue(e[1]) || e[0][0] != ':' && !h2ValidName(e[0]) {
			t.Errorf("static entry %d %q: %q is not sound", i+1, e[0], e[1])
		}
	}
}

// TestHPACKDecVetted: a table entry is vetted only once the field checks
// found it sound, and one that is not stays malformed each time a block
// names it; so is one added after its list was already malformed, which
// the checks never reached.
func TestHPACKDecVetted(t *testing.T) {
	var dec hpackDec
	dec.init(h2TableSize, 1<<16)
	var d h2decode
	decode := func(b []byte) bool {
		t.Helper()
		d.reset(nil, false)
		d.limit = 1 << 16
		if err := dec.decode(b, &d); err != nil {
			t.Fatal(err)
		}
		return d.malformed
	}
	// lit is a literal with incremental indexing and a new name (§6.2.1).
	lit := func(name, value string) []byte {
		b := append([]byte{0x40, byte(len(name))}, name...)
		return append(append(b, byte(len(value))), value...)
	}
	newest := func() bool { return dec.ents[len(dec.ents)-1].vetted }
	const again = 0xbe // indexed: 62, the newest entry

	if decode(lit("x-ok", "v")) || !newest() {
		t.Fatalf("a sound field: malformed %v, vetted %v", d.malformed, newest())
	}
	if decode([]byte{again}) {
		t.Fatal("a vetted field named again: malformed")
	}
	for _, c := range []struct {
		name  string
		block []byte
	}{
		{"a control byte in the value", lit("x-bad", "a\x01b")},
		{"an uppercase name", lit("X-Up", "v")},
		{"added after a connection field", append(lit("connection", "x"), lit("x-late", "c\x01d")...)},
	} {
		if !decode(c.block) || newest() {
			t.Errorf("%s: malformed %v, vetted %v; want malformed, not vetted", c.name, d.malformed, newest())
		}
		if !decode([]byte{again}) {
			t.Errorf("%s: named again, not malformed", c.name)
		}
	}
}
