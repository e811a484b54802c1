//go:build simdedgedebug

package server

import (
	"bufio"
	"bytes"
	"io"
	"testing"
)

// TestPoisonCatchesRetainedView keeps views past the handler's return (a
// bug the Request contract forbids) and checks that the debug build has
// overwritten them: the use-after-release is visible, not silent.
func TestPoisonCatchesRetainedView(t *testing.T) {
	kept := make(chan [3][]byte, 4)
	h := HandlerFunc(func(w *ResponseWriter, r *Request) {
		b, _ := r.BodyBytes()
		v, _ := r.Header("X-Secret")
		kept <- [3][]byte{r.Target(), v, b} // retained: forbidden
		w.WriteString("ok")
	})
	_, addr := startTCP(t, h, Options{})
	c := dial(t, addr)
	br := bufio.NewReader(c)
	io.WriteString(c, "POST /secret-path HTTP/1.1\r\nHost: x\r\nX-Secret: s3cr3t\r\nContent-Length: 4\r\n\r\nbody")
	readResponse(t, br, "POST")
	views := <-kept
	for i, v := range views {
		if len(v) == 0 {
			t.Fatalf("view %d empty", i)
		}
		if !bytes.Equal(v, bytes.Repeat([]byte{PoisonByte}, len(v))) {
			t.Errorf("retained view %d reads %q after release, want poison", i, v)
		}
	}
	// Message transport: the message buffer is poisoned before Release.
	sl, ml := serveMem(t, h, Options{})
	_ = sl
	msg := []byte("POST /m HTTP/1.1\r\nHost: x\r\nX-Secret: m\r\nContent-Length: 2\r\n\r\nhi")
	ml.Exchange(msg)
	views = <-kept
	for i, v := range views {
		if !bytes.Equal(v, bytes.Repeat([]byte{PoisonByte}, len(v))) {
			t.Errorf("message view %d reads %q after release", i, v)
		}
	}
}
