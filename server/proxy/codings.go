package proxy

import (
	"errors"

	"github.com/simdedge/simdedge/internal/ascii"
	phttp "github.com/simdedge/simdedge/parse/http"
)

// Transfer codings. The edge removes only the chunked framing, so a
// message with another transfer coding ("gzip, chunked") cannot be relayed
// without dropping that coding, which would hand on coded bytes as the
// content. Requests are refused with 501 by the server's parser
// (parse/http Options.OnlyChunked); an upstream response with one gets
// 502 (parseHead), on both proxy paths.

var errResponseCoding = errors.New("proxy: upstream response has a transfer coding other than chunked")

// otherCoding reports whether a Transfer-Encoding field of hs lists a
// coding other than chunked.
func otherCoding(hs phttp.Headers) bool {
	for i := hs.Index("Transfer-Encoding", 0); i >= 0; i = hs.Index("Transfer-Encoding", i+1) {
		v := hs[i].Value
		for len(v) > 0 {
			j := 0
			for j < len(v) && v[j] != ',' {
				j++
			}
			item := ascii.TrimOWS(v[:j])
			for k, c := range item {
				if c == ';' || c == ' ' || c == '\t' {
					item = item[:k]
					break
				}
			}
			if len(item) > 0 && !phttp.EqualFold(item, "chunked") {
				return true
			}
			if j == len(v) {
				break
			}
			v = v[j+1:]
		}
	}
	return false
}
