//go:build rdma && cgo

package rdma_test

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"testing"
	"time"

	"github.com/simdedge/simdedge/parse/json/envelope"
	"github.com/simdedge/simdedge/rdma"
	"github.com/simdedge/simdedge/server"
)

func envelopeRoundTrip(c *rdma.Client, env []byte) ([]byte, error) {
	var out []byte
	err := c.RoundTripEnvelope(env, 20*time.Second, func(b []byte, more bool) error {
		out = append(out, b...)
		return nil
	})
	return out, err
}

// built returns a copy of the envelope of p (Build's result is valid only
// until the next Build).
func built(b *envelope.Builder, p *envelope.Parts) []byte {
	return append([]byte(nil), b.Build(p)...)
}

// TestTransportEnvelope: requests sent as FlatBuffers envelopes reach the
// same handler as HTTP/1.1 ones, inline and by rendezvous (a body larger
// than a message), interleaved with HTTP/1.1 requests on one connection;
// malformed envelopes are answered 400 and the connection stays usable.
func TestTransportEnvelope(t *testing.T) {
	needTransport(t)
	h := server.HandlerFunc(func(w *server.ResponseWriter, r *server.Request) {
		body, err := r.BodyBytes()
		if err != nil {
			w.WriteHeader(server.StatusFor(err))
			return
		}
		sum := sha256.Sum256(body)
		v, _ := r.Header("X-Via")
		fmt.Fprintf(w, "%s %s %s %d %x", r.Method(), r.Target(), v, len(body), sum[:4])
	})
	ml, addr := startBackend(t, rdma.ListenConfig{Credits: 8, MessageSize: 4096}, h)
	c := dialClient(t, addr, rdma.DialOptions{Credits: 8, MessageSize: 4096})
	b := envelope.NewBuilder(0)
	for _, size := range []int{0, 100, 3000, 10000, 1 << 20} {
		body := bodyPattern(size)
		p := envelope.Parts{Method: []byte("POST"), Target: []byte(fmt.Sprintf("/env/%d", size)), Version: 11,
			Headers: []envelope.Header{{Name: []byte("Host"), Value: []byte("backend")}, {Name: []byte("X-Via"), Value: []byte("envelope")}},
			Body:    body}
		resp, err := envelopeRoundTrip(c, b.Build(&p))
		if err != nil {
			t.Fatalf("size %d: %v", size, err)
		}
		sum := sha256.Sum256(body)
		if got, want := string(responseBody(t, resp)), fmt.Sprintf("POST /env/%d envelope %d %x", size, size, sum[:4]); got != want {
			t.Errorf("size %d: %q, want %q", size, got, want)
		}
		// An HTTP/1.1 request on the same connection is not taken for one.
		resp, err = wholeRoundTrip(c, []byte("GET /wire HTTP/1.1\r\nHost: x\r\nX-Via: wire\r\n\r\n"))
		if err != nil {
			t.Fatal(err)
		}
		if got := string(responseBody(t, resp)); got != "GET /wire wire 0 e3b0c442" {
			t.Errorf("wire request after an envelope: %q", got)
		}
	}

	valid := built(b, &envelope.Parts{Method: []byte("GET"), Target: []byte("/"), Version: 11,
		Headers: []envelope.Header{{Name: []byte("Host"), Value: []byte("x")}}})
	for _, tc := range []struct {
		name string
		env  []byte
	}{
		{"http bytes as an envelope", []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")},
		{"truncated", valid[:len(valid)-3]},
		{"empty", nil},
		{"header injection", built(b, &envelope.Parts{Method: []byte("GET"), Target: []byte("/"), Version: 11,
			Headers: []envelope.Header{{Name: []byte("Host"), Value: []byte("x\r\nContent-Length: 5")}}})},
		{"length mismatch, by rendezvous", built(b, &envelope.Parts{Method: []byte("POST"), Target: []byte("/"), Version: 11,
			Headers: []envelope.Header{{Name: []byte("Host"), Value: []byte("x")}, {Name: []byte("Content-Length"), Value: []byte("1")}},
			Body:    bodyPattern(8000)})},
	} {
		resp, err := envelopeRoundTrip(c, tc.env)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !bytes.HasPrefix(resp, []byte("HTTP/1.1 400 ")) {
			t.Errorf("%s: %.60q, want a 400", tc.name, resp)
		}
	}
	// The connection is still good.
	if resp, err := envelopeRoundTrip(c, valid); err != nil || !bytes.HasPrefix(resp, []byte("HTTP/1.1 200 ")) {
		t.Fatalf("after the rejections: %v %.60q", err, resp)
	}
	waitFor(t, "the listener to release every slot", func() bool { st := ml.Stats(); return st.Held == 0 && st.Queued == 0 })
}
