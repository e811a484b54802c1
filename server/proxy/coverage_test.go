package proxy

import (
	"errors"
	"testing"

	phttp "github.com/simdedge/simdedge/parse/http"
)

// TestRejectedCoversEverySentinel checks that the cases of
// TestRejectedNeverForwarded exercise every rejection parse/http has for a
// request (head and chunked body), by running each case through the parser
// and decoder with the proxy test's limits.
func TestRejectedCoversEverySentinel(t *testing.T) {
	all := []error{
		phttp.ErrInvalidMethod, phttp.ErrInvalidTarget, phttp.ErrInvalidVersion, phttp.ErrUnsupportedVersion,
		phttp.ErrInvalidRequestLine, phttp.ErrBareCR, phttp.ErrBareLF, phttp.ErrInvalidHeaderName,
		phttp.ErrInvalidHeaderValue, phttp.ErrSpaceBeforeColon, phttp.ErrObsFold, phttp.ErrLeadingWhitespace,
		phttp.ErrMissingHost, phttp.ErrMultipleHost, phttp.ErrInvalidContentLength, phttp.ErrConflictingContentLength,
		phttp.ErrContentLengthWithTE, phttp.ErrChunkedNotFinal, phttp.ErrUnknownTransferCoding,
		phttp.ErrInvalidTransferEncoding, phttp.ErrTransferEncodingInHTTP10,
		phttp.ErrInvalidChunkSize, phttp.ErrChunkSizeOverflow, phttp.ErrInvalidChunkExtension, phttp.ErrMissingChunkCRLF,
		phttp.ErrInvalidTrailer, phttp.ErrChunkLineTooLong, phttp.ErrBodyTooLarge, phttp.ErrTrailerTooLarge,
		phttp.ErrRequestLineTooLong, phttp.ErrHeaderTooLarge, phttp.ErrTooManyHeaders,
	}
	p := phttp.NewParser(phttp.Options{MaxHeaderBytes: 4096, MaxHeaders: 10, MaxRequestLine: 1024})
	seen := map[error]bool{}
	for _, tc := range rejected {
		var req phttp.Request
		buf := []byte(tc.req)
		n, err := p.ParseRequest(buf, &req)
		if err == nil {
			switch req.Body {
			case phttp.BodyLength:
				if req.ContentLength > 100 {
					err = phttp.ErrBodyTooLarge // the server's MaxBodyBytes check
				}
			case phttp.BodyChunked:
				d := phttp.ChunkedDecoder{MaxBody: 100}
				_, _, err = d.Decode(buf[n:])
			}
		}
		if err == nil || err == phttp.ErrNeedMore {
			t.Errorf("%s: parse/http accepts it (%v)", tc.name, err)
			continue
		}
		for _, s := range all {
			if errors.Is(err, s) {
				seen[s] = true
			}
		}
		if got := phttp.StatusFor(err); got != tc.status {
			t.Errorf("%s: StatusFor = %d, test expects %d", tc.name, got, tc.status)
		}
	}
	for _, s := range all {
		if !seen[s] {
			t.Errorf("no case exercises %v", s)
		}
	}
}
