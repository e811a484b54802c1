package server

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"testing"
)

// Status codes of issue 18, item 8, on every engine and on the message
// transport: an unknown expectation is 417 (RFC 9110 §10.1.1), a target
// with a fragment 400 (RFC 9112 §3.2), a chunked body over the limit 413
// whatever the handler answers.

var expectFragmentCases = []struct {
	name, req string
	status    int
}{
	{"unknown expectation", "POST / HTTP/1.1\r\nHost: x\r\nExpect: pigeons\r\nContent-Length: 3\r\n\r\nabc", 417},
	{"unknown expectation in a list", "POST / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue, x=1\r\nContent-Length: 3\r\n\r\nabc", 417},
	{"fragment", "GET /a?b#c HTTP/1.1\r\nHost: x\r\n\r\n", 400},
	{"fragment in absolute form", "GET http://x/a#c HTTP/1.1\r\nHost: x\r\n\r\n", 400},
}

func TestExpectAndFragmentStatus(t *testing.T) {
	var ran atomic.Int32
	h := HandlerFunc(func(w *ResponseWriter, r *Request) {
		ran.Add(1)
		r.BodyBytes()
	})
	_, addr := startTCP(t, h, Options{})
	for _, tc := range expectFragmentCases {
		t.Run(tc.name, func(t *testing.T) {
			c := dial(t, addr)
			io.WriteString(c, tc.req)
			br := bufio.NewReader(c)
			resp, _ := readResponse(t, br, "GET")
			if resp.StatusCode != tc.status || !resp.Close {
				t.Errorf("status %d close=%v, want %d and close", resp.StatusCode, resp.Close, tc.status)
			}
			expectClosed(t, br)
		})
	}
	if n := ran.Load(); n != 0 {
		t.Errorf("handler ran %d times on rejected input", n)
	}
	// "100-continue" in any case is still the one known expectation.
	c := dial(t, addr)
	io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nExpect: 100-CONTINUE\r\nContent-Length: 3\r\n\r\n")
	br := bufio.NewReader(c)
	resp, _ := readResponse(t, br, "POST")
	if resp.StatusCode != 100 {
		t.Fatalf("status %d, want 100 Continue", resp.StatusCode)
	}
	io.WriteString(c, "abc")
	if resp, _ = readResponse(t, br, "POST"); resp.StatusCode != 200 {
		t.Fatalf("status %d after the body, want 200", resp.StatusCode)
	}
}

func TestExpectAndFragmentStatusMessages(t *testing.T) {
	_, ml := serveMem(t, echoBody, Options{})
	for _, tc := range expectFragmentCases {
		replies, _ := ml.Exchange([]byte(tc.req))
		resp, _ := readResponse(t, bufio.NewReader(bytes.NewReader(bytes.Join(replies, nil))), "GET")
		if resp.StatusCode != tc.status {
			t.Errorf("%s: status %d, want %d", tc.name, resp.StatusCode, tc.status)
		}
	}
}

// TestChunkedTooLargeAnyHandler: a chunked body over MaxBodyBytes is
// answered 413, and the connection closes, whether the handler reports
// the error with another status or ignores it (server/stdhttp's tests
// hold a net/http handler to the same).
func TestChunkedTooLargeAnyHandler(t *testing.T) {
	handlers := map[string]Handler{
		"answers 500": HandlerFunc(func(w *ResponseWriter, r *Request) {
			if _, err := io.ReadAll(r.Body()); err != nil {
				w.WriteHeader(500)
				w.WriteString("internal error\n")
			}
		}),
		"ignores the error": HandlerFunc(func(w *ResponseWriter, r *Request) {
			r.BodyBytes()
			w.WriteString("fine\n")
		}),
		"answers 413 itself": HandlerFunc(func(w *ResponseWriter, r *Request) {
			_, err := r.BodyBytes()
			if errors.Is(err, ErrBodyTooLarge) {
				w.WriteHeader(413)
				w.WriteString("custom\n")
			}
		}),
	}
	body := "8\r\n12345678\r\n8\r\n12345678\r\n0\r\n\r\n"
	for name, h := range handlers {
		t.Run(name, func(t *testing.T) {
			_, addr := startTCP(t, h, Options{Limits: Limits{MaxBodyBytes: 10}})
			c := dial(t, addr)
			br := bufio.NewReader(c)
			io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"+body)
			resp, text := readResponse(t, br, "POST")
			if resp.StatusCode != 413 || !resp.Close {
				t.Fatalf("got %d close=%v (%q), want 413 and close", resp.StatusCode, resp.Close, text)
			}
			if name == "answers 413 itself" && !strings.Contains(text, "custom") {
				t.Errorf("the handler's own 413 was replaced: %q", text)
			}
			expectClosed(t, br)
		})
	}
}

// TestBodyTooLargeSameAnswerH2: over HTTP/2 a body over MaxBodyBytes gets
// the answer HTTP/1.1 gives (413 with its text), although the handler
// answered the read error with a 500 of its own.
func TestBodyTooLargeSameAnswerH2(t *testing.T) {
	h := HandlerFunc(func(w *ResponseWriter, r *Request) {
		if _, err := io.ReadAll(r.Body()); err != nil {
			w.WriteHeader(500)
			w.WriteString("internal error\n")
		}
	})
	_, addr := startH2C(t, h, Options{Limits: Limits{MaxBodyBytes: 10}})
	// A reader of unknown length: the request goes without Content-Length,
	// so the limit trips on the DATA frames.
	body := io.MultiReader(strings.NewReader(strings.Repeat("x", 64)))
	resp, err := h2cClient().Post("http://"+addr+"/", "text/plain", body)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.ProtoMajor != 2 || resp.StatusCode != 413 || string(b) != "Request Entity Too Large\n" {
		t.Errorf("%s %d %q, want HTTP/2 413 %q", resp.Proto, resp.StatusCode, b, "Request Entity Too Large\n")
	}
}
