package proxyprotodiff

import (
	"bufio"
	"bytes"
	"net/netip"
	"testing"

	pp "github.com/pires/go-proxyproto"
	"github.com/simdedge/simdedge/server/proxyproto"
)

// BenchmarkParse compares the project's PROXY header parser with
// go-proxyproto's on the headers a load balancer sends (issue 23 lets the
// project keep its own parser only if it measures faster). go-proxyproto
// reads from a bufio.Reader, as it does on a connection; both readers are
// reset, not made, per header, so neither side pays an allocation that a
// server would not.
func BenchmarkParse(b *testing.B) {
	src4, dst4 := netip.MustParseAddrPort("192.0.2.9:4711"), netip.MustParseAddrPort("198.51.100.1:443")
	src6, dst6 := netip.MustParseAddrPort("[2001:db8::9]:4711"), netip.MustParseAddrPort("[2001:db8::1]:443")
	headers := []struct {
		name string
		b    []byte
	}{
		{"v1-tcp4", proxyproto.AppendV1(nil, src4, dst4)},
		{"v1-tcp6", proxyproto.AppendV1(nil, src6, dst6)},
		{"v2-tcp4", proxyproto.AppendV2(nil, src4, dst4)},
		{"v2-tcp6", proxyproto.AppendV2(nil, src6, dst6)},
	}
	for _, h := range headers {
		b.Run(h.name+"/simdedge", func(b *testing.B) {
			b.SetBytes(int64(len(h.b)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, _, err := proxyproto.Parse(h.b); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(h.name+"/go-proxyproto", func(b *testing.B) {
			b.SetBytes(int64(len(h.b)))
			b.ReportAllocs()
			r := bytes.NewReader(h.b)
			br := bufio.NewReaderSize(r, 4096)
			for i := 0; i < b.N; i++ {
				r.Reset(h.b)
				br.Reset(r)
				if _, err := pp.Read(br); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
