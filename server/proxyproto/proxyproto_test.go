package proxyproto

import (
	"bytes"
	"encoding/hex"
	"net/netip"
	"testing"
)

func v2(verCmd, famProto byte, body []byte) []byte {
	b := append([]byte(nil), v2Sig...)
	b = append(b, verCmd, famProto, byte(len(body)>>8), byte(len(body)))
	return append(b, body...)
}

func TestParse(t *testing.T) {
	inet := mustHex("c0000201" + "c6336401" + "1267" + "0050") // 192.0.2.1:4711 -> 198.51.100.1:80
	inet6 := mustHex("20010db8000000000000000000000001" + "20010db8000000000000000000000002" + "0001" + "01bb")
	for _, tc := range []struct {
		name string
		in   string
		n    int
		src  string // "" for Local
		err  error
	}{
		{"v1 tcp4", "PROXY TCP4 192.0.2.1 198.51.100.1 4711 80\r\nGET", 43, "192.0.2.1:4711", nil},
		{"v1 tcp6", "PROXY TCP6 2001:db8::1 2001:db8::2 1 443\r\n", 42, "[2001:db8::1]:1", nil},
		{"v1 unknown", "PROXY UNKNOWN ffff::1 whatever\r\nGET", 32, "", nil},
		{"v1 unknown bare", "PROXY UNKNOWN\r\n", 15, "", nil},
		{"v1 family mismatch", "PROXY TCP4 2001:db8::1 2001:db8::2 1 2\r\n", 0, "", ErrInvalid},
		{"v1 bad port", "PROXY TCP4 192.0.2.1 192.0.2.2 65536 80\r\n", 0, "", ErrInvalid},
		{"v1 leading zero", "PROXY TCP4 192.0.2.1 192.0.2.2 080 80\r\n", 0, "", ErrInvalid},
		{"v1 double space", "PROXY TCP4  192.0.2.1 192.0.2.2 1 80\r\n", 0, "", ErrInvalid},
		{"v1 bare LF", "PROXY TCP4 192.0.2.1 192.0.2.2 1 80\n", 0, "", ErrInvalid},
		{"v1 extra field", "PROXY TCP4 192.0.2.1 192.0.2.2 1 80 9\r\n", 0, "", ErrInvalid},
		{"v1 udp", "PROXY UDP4 192.0.2.1 192.0.2.2 1 80\r\n", 0, "", ErrInvalid},
		{"v1 too long", "PROXY UNKNOWN " + string(bytes.Repeat([]byte("a"), 100)), 0, "", ErrInvalid},
		{"v1 partial", "PROXY TCP4 192.0.2.1", 0, "", ErrNeedMore},
		{"http", "GET / HTTP/1.1\r\n", 0, "", ErrNotProxy},
		{"propfind", "PROPFIND / HTTP/1.1\r\n", 0, "", ErrNotProxy},
		{"leading crlf", "\r\nGET / HTTP/1.1\r\n", 0, "", ErrNotProxy},
		{"empty", "", 0, "", ErrNeedMore},
		{"v2 inet", string(v2(0x21, 0x11, inet)) + "rest", 28, "192.0.2.1:4711", nil},
		{"v2 inet6", string(v2(0x21, 0x21, inet6)), 52, "[2001:db8::1]:1", nil},
		{"v2 inet with TLVs", string(v2(0x21, 0x11, append(append([]byte(nil), inet...), 0x04, 0, 1, 'x'))), 32, "192.0.2.1:4711", nil},
		{"v2 local", string(v2(0x20, 0x00, nil)), 16, "", nil},
		{"v2 local with addresses", string(v2(0x20, 0x11, inet)), 28, "", nil},
		{"v2 unspec", string(v2(0x21, 0x00, nil)), 16, "", nil},
		{"v2 unix", string(v2(0x21, 0x31, make([]byte, unixLen))), 16 + unixLen, "", nil},
		{"v2 short inet", string(v2(0x21, 0x11, inet[:11])), 0, "", ErrInvalid},
		{"v2 version 1", string(v2(0x11, 0x11, inet)), 0, "", ErrInvalid},
		{"v2 bad command", string(v2(0x22, 0x11, inet)), 0, "", ErrInvalid},
		{"v2 bad family", string(v2(0x21, 0x41, inet)), 0, "", ErrInvalid},
		// §2.2 lists the only valid family/protocol bytes (found by
		// fuzz/proxyprotodiff): UNSPEC with a protocol, or a family
		// without one, is invalid.
		{"v2 unspec family with dgram", string(v2(0x21, 0x02, nil)), 0, "", ErrInvalid},
		{"v2 inet without protocol", string(v2(0x21, 0x10, inet)), 0, "", ErrInvalid},
		{"v2 too long", string(v2Sig) + "\x21\x11\x08\x00", 0, "", ErrTooLong},
		{"v2 partial", string(v2(0x21, 0x11, inet)[:20]), 0, "", ErrNeedMore},
	} {
		n, h, err := Parse([]byte(tc.in))
		if err != tc.err || n != tc.n {
			t.Errorf("%s: n %d err %v, want %d %v", tc.name, n, err, tc.n, tc.err)
			continue
		}
		if err != nil {
			continue
		}
		if tc.src == "" {
			if !h.Local {
				t.Errorf("%s: not Local: %+v", tc.name, h)
			}
		} else if h.Local || h.Source != netip.MustParseAddrPort(tc.src) {
			t.Errorf("%s: source %v local %v, want %s", tc.name, h.Source, h.Local, tc.src)
		}
	}
}

func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// TestRoundTrip: what Append writes, Parse reads back, and every prefix of
// it is ErrNeedMore (the incremental contract the engines rely on).
func TestRoundTrip(t *testing.T) {
	for _, pair := range [][2]string{
		{"192.0.2.1:4711", "198.51.100.1:80"},
		{"[2001:db8::1]:65535", "[2001:db8::2]:0"},
		{"192.0.2.1:1", "[2001:db8::2]:2"}, // mixed: UNKNOWN / LOCAL
	} {
		src, dst := netip.MustParseAddrPort(pair[0]), netip.MustParseAddrPort(pair[1])
		mixed := src.Addr().Is4() != dst.Addr().Is4()
		for v, b := range [][]byte{AppendV1(nil, src, dst), AppendV2(nil, src, dst)} {
			n, h, err := Parse(b)
			if err != nil || n != len(b) || h.Version != v+1 || h.Local != mixed || !mixed && (h.Source != src || h.Destination != dst) {
				t.Errorf("v%d %v: n %d/%d %+v %v", v+1, pair, n, len(b), h, err)
			}
			for k := range len(b) {
				if _, _, err := Parse(b[:k]); err != ErrNeedMore {
					t.Errorf("v%d %v: prefix %d: %v", v+1, pair, k, err)
				}
			}
		}
	}
}

func TestParseAllocs(t *testing.T) {
	v1 := []byte("PROXY TCP6 2001:db8::1 2001:db8::2 1 443\r\n")
	v2b := AppendV2(nil, netip.MustParseAddrPort("192.0.2.1:1"), netip.MustParseAddrPort("192.0.2.2:2"))
	if n := testing.AllocsPerRun(100, func() { Parse(v1); Parse(v2b) }); n != 0 {
		t.Errorf("%v allocations", n)
	}
}

// FuzzParse: no panic; a header's length never exceeds the input or the
// bounds; a parsed header parses the same with bytes after it, and its
// prefixes need more.
func FuzzParse(f *testing.F) {
	f.Add([]byte("PROXY TCP4 192.0.2.1 198.51.100.1 4711 80\r\n"))
	f.Add([]byte("PROXY UNKNOWN\r\n"))
	f.Add(AppendV2(nil, netip.MustParseAddrPort("[2001:db8::1]:1"), netip.MustParseAddrPort("[2001:db8::2]:2")))
	f.Add([]byte("GET / HTTP/1.1\r\n\r\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		n, h, err := Parse(b)
		if err != nil {
			if n != 0 {
				t.Fatalf("error %v with length %d", err, n)
			}
			return
		}
		if n <= 0 || n > len(b) || n > MaxV2Len || h.Version == 1 && n > MaxV1Len {
			t.Fatalf("length %d of %d", n, len(b))
		}
		n2, h2, err2 := Parse(append(append([]byte(nil), b[:n]...), "GET"...))
		if err2 != nil || n2 != n || h2 != h {
			t.Fatalf("with trailing bytes: %d %+v %v", n2, h2, err2)
		}
		if _, _, err := Parse(b[:n-1]); err != ErrNeedMore {
			t.Fatalf("prefix of a header: %v", err)
		}
	})
}
