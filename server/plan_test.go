package server

import (
	"bufio"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// countGate is a Gate that counts its admissions; pending makes its
// credentials need a goroutine (the loop then hands the request off).
type countGate struct {
	admits  atomic.Int64
	status  int
	pending bool
}

func (g *countGate) Admit(*Request) (int, int)                { g.admits.Add(1); return g.status, 7 }
func (g *countGate) Pending(*Request) bool                    { return g.pending }
func (g *countGate) Authorize(*ResponseWriter, *Request) bool { return true }

// refuseRewrite refuses every request, as a rewrite whose expansion would
// put a forbidden byte in a field does.
type refuseRewrite struct{}

func (refuseRewrite) Rewrite(*Request) error { return errors.New("server: test refusal") }

// TestPlanRunner: the steps of a plan run in their order on the engine
// under test: the gate admits once per request even when the loop asks
// where the plan can run and then hands the request to a goroutine that
// runs the steps; a refused rewrite answers 400 before a refused
// admission; a refused admission answers with its status; HSTS is not
// sent over plain HTTP.
func TestPlanRunner(t *testing.T) {
	ok := Inline(HandlerFunc(func(w *ResponseWriter, r *Request) { w.WriteString("ok") }))
	goOnly := HandlerFunc(func(w *ResponseWriter, r *Request) { w.WriteString("go") })
	handoff := &countGate{pending: true}
	inline := &countGate{}
	refused := &countGate{status: statusTooMany}
	plans := map[string]*Plan{
		"/handoff": {Gate: handoff, HSTS: "max-age=1", Action: ok},
		"/inline":  {Gate: inline, Action: ok},
		"/go":      {Gate: inline, Action: goOnly},
		"/refused": {Gate: refused, Action: ok},
		"/both":    {Gate: refused, Rewrite: refuseRewrite{}, Action: ok},
	}
	h := routerFunc(func(r *Request) *Plan { return plans[string(r.Target())] })
	_, addr := startTCP(t, h, Options{})
	for _, tc := range []struct {
		path   string
		status int
		body   string
	}{
		{"/handoff", 200, "ok"}, {"/inline", 200, "ok"}, {"/go", 200, "go"},
		{"/refused", 429, "too many requests\n"}, {"/both", 400, "bad request\n"},
	} {
		c := dial(t, addr)
		c.SetDeadline(time.Now().Add(testTimeout))
		br := bufio.NewReader(c)
		for i := range 2 {
			if _, err := c.Write([]byte("GET " + tc.path + " HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil {
				t.Fatal(err)
			}
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("%s (%d): %v", tc.path, i, err)
			}
			var b strings.Builder
			_, err = bufio.NewReader(resp.Body).WriteTo(&b)
			resp.Body.Close()
			if err != nil || resp.StatusCode != tc.status || b.String() != tc.body || resp.Header.Get("Strict-Transport-Security") != "" {
				t.Errorf("%s (%d): %d %q %v, want %d %q and no HSTS over plain HTTP", tc.path, i, resp.StatusCode, b.String(), resp.Header, tc.status, tc.body)
			}
			if tc.status == 429 && resp.Header.Get("Retry-After") != "7" {
				t.Errorf("%s: Retry-After %q, want 7", tc.path, resp.Header.Get("Retry-After"))
			}
		}
		c.Close()
	}
	// Two requests each; /inline and /go share a gate, as /refused and
	// /both do.
	for name, g := range map[string]*countGate{"handoff": handoff, "inline and go": inline, "refused": refused} {
		want := int64(2)
		if g != handoff {
			want = 4
		}
		if n := g.admits.Load(); n != want {
			t.Errorf("%s: %d admissions, want %d (one per request)", name, n, want)
		}
	}
}
