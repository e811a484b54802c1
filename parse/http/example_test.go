package http_test

import (
	"errors"
	"fmt"

	"github.com/simdedge/simdedge/parse/http"
)

func ExampleParseRequest() {
	buf := []byte("POST /upload HTTP/1.1\r\nHost: example.com\r\nContent-Length: 5\r\n\r\nhello")
	var req http.Request
	n, err := http.ParseRequest(buf, &req)
	if err != nil {
		fmt.Println("error:", err, http.StatusFor(err))
		return
	}
	ua, _ := req.Headers.Get("host")
	fmt.Printf("%s %s %s host=%s body=%v length=%d\n", req.Method, req.Target, req.Version, ua, req.Body, req.ContentLength)
	fmt.Printf("body: %s\n", buf[n:n+int(req.ContentLength)])
	// Output:
	// POST /upload HTTP/1.1 host=example.com body=length length=5
	// body: hello
}

// A server feeds a growing buffer: ErrNeedMore until the head is complete.
func ExampleParseRequest_incremental() {
	stream := "GET / HTTP/1.1\r\nHost: example.com\r\n\r\n"
	var buf []byte
	var req http.Request
	for i := 0; i < len(stream); i += 16 {
		buf = append(buf, stream[i:min(i+16, len(stream))]...)
		n, err := http.ParseRequest(buf, &req)
		if errors.Is(err, http.ErrNeedMore) {
			fmt.Println("need more after", len(buf), "bytes")
			continue
		}
		fmt.Println("head of", n, "bytes:", string(req.Method), string(req.Target), err)
	}
	// Output:
	// need more after 16 bytes
	// need more after 32 bytes
	// head of 37 bytes: GET / <nil>
}

func ExampleStatusFor() {
	var req http.Request
	_, err := http.ParseRequest([]byte("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n"), &req)
	fmt.Println(err, http.StatusFor(err))
	_, err = http.ParseRequest([]byte("GET / HTTP/2.0\r\n\r\n"), &req)
	fmt.Println(err, http.StatusFor(err))
	// Output:
	// http: both transfer-encoding and content-length 400
	// http: unsupported http version 505
}

// The chunked decoder moves the body to the front of the buffer it is
// given, across as many calls as the bytes take to arrive.
func ExampleChunkedDecoder() {
	var d http.ChunkedDecoder
	var body []byte
	pending := []byte{}
	for _, part := range []string{"5\r\nhel", "lo\r\n6;ext=1\r\n world\r", "\n0\r\n\r\nNEXT"} {
		pending = append(pending, part...)
		n, consumed, err := d.Decode(pending)
		body = append(body, pending[:n]...)
		pending = append(pending[:0], pending[consumed:]...)
		if err == nil {
			fmt.Printf("body %q, next message starts with %q\n", body, pending)
			return
		}
		if !errors.Is(err, http.ErrNeedMore) {
			fmt.Println("error:", err)
			return
		}
	}
	// Output:
	// body "hello world", next message starts with "NEXT"
}

func ExampleParser() {
	p := http.NewParser(http.Options{MaxHeaders: 2, AllowBareLF: true})
	var req http.Request
	_, err := p.ParseRequest([]byte("GET / HTTP/1.1\nHost: a\nA: 1\nB: 2\n\n"), &req)
	fmt.Println(err, http.StatusFor(err))
	// Output:
	// http: too many header fields 431
}
