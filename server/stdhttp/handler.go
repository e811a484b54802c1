package stdhttp

import (
	"context"
	"io"
	"net/http"

	"github.com/simdedge/simdedge/server"
)

// Handler adapts h to a server.Handler (see the package documentation).
func Handler(h http.Handler) server.Handler { return adapter{h} }

type adapter struct{ h http.Handler }

func (a adapter) ServeEdge(w *server.ResponseWriter, r *server.Request) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := newRequest(ctx, r)
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		w.WriteString("bad request target\n")
		return
	}
	// The server watches the client from here, or, while body bytes are
	// unread, from the body's end (watchBody).
	if !r.OnClientGone(cancel) && req.Body != http.NoBody {
		req.Body = &watchBody{r: r, body: req.Body, gone: cancel}
	}
	rw := &responseWriter{w: w, h: make(http.Header)}
	if r.HTTP2() {
		a.h.ServeHTTP(rw, req)
	} else {
		a.h.ServeHTTP(&hijackWriter{rw, w}, req)
	}
	if !rw.hijacked {
		rw.commit()
	}
}

// watchBody starts the watch of the client once the body has been read
// to its end: until then the body reader owns the connection's reads.
type watchBody struct {
	r       *server.Request
	body    io.ReadCloser
	gone    func()
	watched bool
}

func (b *watchBody) Read(p []byte) (int, error) {
	n, err := b.body.Read(p)
	if err == io.EOF && !b.watched {
		b.watched = true
		b.r.OnClientGone(b.gone)
	}
	return n, err
}

func (b *watchBody) Close() error { return b.body.Close() }
