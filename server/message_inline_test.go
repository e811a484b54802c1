package server

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// inlineMemListener makes a memMessages an InlineMessageListener:
// its own goroutine (the "poller") receives every message and offers it
// to the server's serve function before queueing it for Receive.
type inlineMemListener struct {
	memMessages
	serve    atomic.Pointer[func(Message) bool]
	queue    chan Message
	onPoller atomic.Bool // the poller is inside serve
	inlined  atomic.Int64
	served   chan bool    // per message: whether serve took it
	sets     atomic.Int64 // SetInline calls with a function
	unsets   atomic.Int64 // SetInline(nil) calls
}

var _ InlineMessageListener = (*inlineMemListener)(nil)

func newInlineMemListener() *inlineMemListener {
	l := &inlineMemListener{memMessages: newMemMessages(0), queue: make(chan Message), served: make(chan bool, 64)}
	go l.poll()
	return l
}

func (l *inlineMemListener) SetInline(serve func(Message) bool) {
	if serve == nil {
		l.unsets.Add(1)
		l.serve.Store(nil)
		return
	}
	l.sets.Add(1)
	l.serve.Store(&serve)
}

func (l *inlineMemListener) poll() {
	for {
		m, err := l.memMessages.Receive()
		if err != nil {
			return
		}
		ok := false
		if f := l.serve.Load(); f != nil {
			l.onPoller.Store(true)
			ok = (*f)(m)
			l.onPoller.Store(false)
		}
		if ok {
			l.inlined.Add(1)
		}
		select {
		case l.served <- ok:
		default:
		}
		if ok {
			continue
		}
		select {
		case l.queue <- m:
		case <-l.Done():
			m.Release()
			return
		}
	}
}

func (l *inlineMemListener) Receive() (Message, error) {
	select {
	case m := <-l.queue:
		return m, nil
	case <-l.Done():
		return nil, net.ErrClosed
	}
}

// serveInlineMem serves h on a new inlineMemListener until the test ends.
func serveInlineMem(t *testing.T, h Handler) (*inlineMemListener, *Server, chan error) {
	t.Helper()
	s := New(Options{Handler: h})
	l := newInlineMemListener()
	done := make(chan error, 1)
	go func() { done <- s.ServeMessages(l) }()
	if _, ok := h.(Inliner); ok {
		// ServeMessages sets the function before its first Receive.
		for deadline := time.Now().Add(testTimeout); l.sets.Load() == 0; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("ServeMessages never called SetInline")
			}
		}
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		s.Shutdown(ctx)
		<-done
	})
	return l, s, done
}

// TestServeMessagesInline: an Inliner's requests are served on the
// transport's receiving goroutine; declined requests (the Inliner offers
// nothing, a chunked body) reach Receive untouched and get the same
// answers from the server core's goroutines; malformed requests are
// answered inline; ServeMessages withdraws the function when it returns.
func TestServeMessagesInline(t *testing.T) {
	var onPoller sync.Map // target -> ran on the poller
	var l *inlineMemListener
	base := HandlerFunc(func(w *ResponseWriter, r *Request) {
		onPoller.Store(string(r.Target()), l.onPoller.Load())
		echoBody.ServeEdge(w, r)
	})
	h := inlinerFunc{base, func(r *Request) Handler {
		if strings.HasPrefix(string(r.Target()), "/go/") {
			return nil
		}
		return base
	}}
	var s *Server
	var done chan error
	l, s, done = serveInlineMem(t, h)
	cases := []struct {
		req, want string
		inline    bool
	}{
		{"GET /a HTTP/1.1\r\nHost: x\r\n\r\n", "GET /a 0:", true},
		{"POST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nxyz", "POST /b 3:xyz", true},
		{"GET /go/c HTTP/1.1\r\nHost: x\r\n\r\n", "GET /go/c 0:", false},
		{"POST /d HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n1\r\nc\r\n0\r\n\r\n", "POST /d 3:abc", false},
		{"GET /e HTTP/1.1\r\nHost: x\r\nBad Field: y\r\n\r\n", "", true}, // 400, no handler
	}
	for i, c := range cases {
		replies, err := l.Exchange([]byte(c.req))
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		resp := string(joinReplies(replies))
		if c.want == "" {
			if !strings.HasPrefix(resp, "HTTP/1.1 400 ") {
				t.Errorf("case %d: %.40q, want a 400", i, resp)
			}
		} else if !strings.HasSuffix(resp, "\r\n\r\n"+c.want) {
			t.Errorf("case %d: %q, want the body %q", i, resp, c.want)
		}
		if got := <-l.served; got != c.inline {
			t.Errorf("case %d: served inline = %v, want %v", i, got, c.inline)
		}
		if c.want != "" {
			target := strings.Fields(c.req)[1]
			if ran, _ := onPoller.Load(target); ran != c.inline {
				t.Errorf("case %d: handler on the poller = %v, want %v", i, ran, c.inline)
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, ErrServerClosed) {
		t.Errorf("ServeMessages: %v", err)
	}
	done <- ErrServerClosed // for the cleanup
	if l.sets.Load() != 1 || l.unsets.Load() != 1 || l.serve.Load() != nil {
		t.Errorf("SetInline: %d sets, %d unsets, function left: %v", l.sets.Load(), l.unsets.Load(), l.serve.Load() != nil)
	}
}

// TestServeMessagesInlinePanic: a panicking inline handler gets a 500 and
// its message is released, as on a goroutine.
func TestServeMessagesInlinePanic(t *testing.T) {
	l, _, _ := serveInlineMem(t, Inline(HandlerFunc(func(*ResponseWriter, *Request) { panic("boom") })))
	replies, err := l.Exchange([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	if resp, inline := string(joinReplies(replies)), <-l.served; !strings.HasPrefix(resp, "HTTP/1.1 500 ") || !inline {
		t.Errorf("%.40q, inline %v", resp, inline)
	}
}

// TestServeMessagesInlineNotInliner: a handler that is no Inliner gets no
// inline serve.
func TestServeMessagesInlineNotInliner(t *testing.T) {
	l, _, _ := serveInlineMem(t, HandlerFunc(func(w *ResponseWriter, r *Request) { w.WriteString("x") }))
	replies, err := l.Exchange([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	if resp, inline := string(joinReplies(replies)), <-l.served; !strings.HasSuffix(resp, "\r\n\r\nx") || l.sets.Load() != 0 || inline {
		t.Errorf("%q, %d sets, inline %v", resp, l.sets.Load(), inline)
	}
}

type inlinerFunc struct {
	Handler
	f func(*Request) Handler
}

func (h inlinerFunc) InlineHandler(r *Request) Handler { return h.f(r) }

func joinReplies(r [][]byte) []byte {
	var out []byte
	for _, b := range r {
		out = append(out, b...)
	}
	return out
}

// TestServeMessagesInlineAdmitsOnce: a message that the inline path
// declines (its action needs a goroutine, or its credentials do) is
// admitted once, on the goroutine that serves it. A declined message is
// parsed and looked up again there (its plan does not travel with it), so
// an admission taken while deciding to decline counted every such request
// twice against a rate limit.
func TestServeMessagesInlineAdmitsOnce(t *testing.T) {
	goOnly := HandlerFunc(func(w *ResponseWriter, r *Request) { w.WriteString("go") })
	ok := Inline(HandlerFunc(func(w *ResponseWriter, r *Request) { w.WriteString("ok") }))
	gates := map[string]*countGate{"/go": {}, "/pending": {pending: true}, "/inline": {}}
	plans := map[string]*Plan{
		"/go":      {Gate: gates["/go"], Action: goOnly},
		"/pending": {Gate: gates["/pending"], Action: ok},
		"/inline":  {Gate: gates["/inline"], Action: ok},
	}
	l, _, _ := serveInlineMem(t, routerFunc(func(r *Request) *Plan { return plans[string(r.Target())] }))
	for deadline := time.Now().Add(testTimeout); l.sets.Load() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("ServeMessages never called SetInline")
		}
	}
	const n = 3
	for path, want := range map[string]string{"/go": "go", "/pending": "ok", "/inline": "ok"} {
		for range n {
			replies, err := l.Exchange([]byte("GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n"))
			if err != nil {
				t.Fatal(err)
			}
			<-l.served
			if resp := string(joinReplies(replies)); !strings.HasSuffix(resp, "\r\n\r\n"+want) {
				t.Fatalf("%s: %q", path, resp)
			}
		}
		if got := gates[path].admits.Load(); got != n {
			t.Errorf("%s: %d admissions for %d requests", path, got, n)
		}
	}
}
