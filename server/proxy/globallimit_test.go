package proxy

import (
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/internal/loopstat"
	"github.com/simdedge/simdedge/server/internal/servetest"
	"github.com/simdedge/simdedge/server/rewrite"
	"github.com/simdedge/simdedge/server/router"
)

// fakeGlobal is a router.GlobalLimiter that admits the first n requests
// and records what it was asked (server/ratelimit/rls is the real one,
// tested against Envoy's reference service in interop/).
type fakeGlobal struct {
	mu    sync.Mutex
	n     int
	calls int
	ips   []string
	paths []string
}

func (f *fakeGlobal) Limit(env *rewrite.Env) (int, time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	f.ips = append(f.ips, string(env.ClientIP))
	f.paths = append(f.paths, string(env.Path))
	if f.calls > f.n {
		return 429, 2500 * time.Millisecond
	}
	return 0, 0
}

// TestGlobalLimitGate: a route with a global limit asks it exactly once
// per request, with the request's template variables, on every engine and
// both proxy paths, inline and proxy routes alike; over the limit the
// answer is 429 with Retry-After rounded up from the service's wait, and
// the origin is not reached. On the loop such requests are handed to
// goroutines (the call blocks), through the gate's Pending.
func TestGlobalLimitGate(t *testing.T) {
	var originHits sync.Map
	o := startOrigin(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		originHits.Store(r.URL.Path, true)
		io.WriteString(w, "origin")
	}))
	up := newUpstream(t, UpstreamOptions{Targets: []string{o.addr}})
	px := New(up, Options{})
	inline := router.Respond(200, "inline\n", nil)
	fi, fp := &fakeGlobal{n: 2}, &fakeGlobal{n: 2}
	tab, err := router.New([]router.Route{
		{Match: router.Match{PathPrefix: "/inline"}, Handler: router.Gate(inline, router.GatePolicy{Global: fi})},
		{Match: router.Match{PathPrefix: "/proxy"}, Handler: router.Gate(px, router.GatePolicy{Global: fp})},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := server.New(server.Options{Handler: router.NewSwitch(tab), LoopProxy: testLoopProxy})
	base := "http://" + servetest.Serve(t, s, testEngine)
	c := clientFrom(t, "127.0.0.1")
	handoffs := loopstat.Handoffs.Load()
	for _, tc := range []struct {
		path string
		f    *fakeGlobal
	}{{"/inline", fi}, {"/proxy", fp}} {
		for i := range 3 {
			p := tc.path + "/" + string(rune('a'+i))
			a := gateDo(t, c, base+p, nil)
			want := 200
			if i == 2 {
				want = 429
			}
			if a.status != want {
				t.Fatalf("%s: status %d, want %d (%q)", p, a.status, want, a.body)
			}
			if want == 429 {
				if ra := a.header.Get("Retry-After"); ra != "3" {
					t.Errorf("%s: Retry-After %q, want 3 (2.5 s rounded up)", p, ra)
				}
				if _, hit := originHits.Load(p); hit {
					t.Errorf("%s: refused request reached the origin", p)
				}
			}
		}
		tc.f.mu.Lock()
		if tc.f.calls != 3 || tc.f.ips[0] != "127.0.0.1" || tc.f.paths[2] != tc.path+"/c" {
			t.Errorf("%s: limiter asked %d times with %v %v, want 3 with the client and path", tc.path, tc.f.calls, tc.f.ips, tc.f.paths)
		}
		tc.f.mu.Unlock()
	}
	if testEngine == server.EngineLoop && loopstat.Handoffs.Load() == handoffs {
		t.Error("the loop served globally limited requests itself: the blocking call ran on the loop")
	}
}
