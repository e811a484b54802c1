package router

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/textproto"
	"net/url"
	"time"

	phttp "github.com/simdedge/simdedge/parse/http"
	"github.com/simdedge/simdedge/server"
)

// Forward auth (nginx auth_request, Traefik ForwardAuth): before the
// route's handler runs, a subrequest asks an auth service. A 2xx lets the
// request through, with the fields named in CopyHeaders taken from the
// auth response onto the request (replacing what the client sent, and
// removing it when the auth response has none, so a client cannot forge
// them); any other answer (401 with its challenge, a 302 to a login page,
// 403) is returned to the client as it came: status, end-to-end fields and
// a body of at most MaxBody bytes. Redirects are not followed.
//
// What is sent: GET to the service's URL, with no body, carrying the
// client's request fields (Authorization and Cookie included; hop-by-hop
// fields, Content-Length, Transfer-Encoding, Expect and the client's own
// X-Forwarded-* dropped) and:
//
//	X-Forwarded-Method  the request's method
//	X-Forwarded-Uri     the request target as received
//	X-Forwarded-Host    the Host field
//	X-Forwarded-Proto   http or https
//	X-Forwarded-For     the client address (Request.ClientIP)
//
// It runs on goroutines only (the event loop hands such requests off); a
// service that cannot be reached or does not answer within Timeout gives
// 502, or 504 for the timeout.

// ForwardAuthOptions configure ForwardAuth.
type ForwardAuthOptions struct {
	// URL is the auth service, http:// or https://.
	URL string
	// CopyHeaders are the auth response's fields copied onto the request.
	CopyHeaders []string
	// Timeout bounds the subrequest, connect to end of body
	// (DefaultForwardAuthTimeout if 0).
	Timeout time.Duration
	// MaxBody bounds the body of a refusal relayed to the client
	// (DefaultForwardAuthMaxBody if 0); a longer one gives 502.
	MaxBody int64
	Logger  *slog.Logger
}

const (
	// DefaultForwardAuthTimeout: an auth decision is a quick lookup;
	// five seconds leaves room for a slow one without holding a client
	// for long.
	DefaultForwardAuthTimeout = 5 * time.Second
	// DefaultForwardAuthMaxBody: refusals are short pages or JSON.
	DefaultForwardAuthMaxBody = 64 << 10
	// forwardAuthIdle: keep-alive connections to the service per host.
	forwardAuthIdle = 64
)

// Errors of NewForwardAuth.
var ErrForwardAuthURL = errors.New("router: forward_auth url must be an absolute http or https URL")

// ForwardAuth is a forward-auth policy; safe for concurrent use.
type ForwardAuth struct {
	o      ForwardAuthOptions
	u      *url.URL
	client *http.Client
	tr     *http.Transport
	copy   []string // canonical names
}

// NewForwardAuth returns the policy for o.
func NewForwardAuth(o ForwardAuthOptions) (*ForwardAuth, error) {
	u, err := url.Parse(o.URL)
	if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, ErrForwardAuthURL
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultForwardAuthTimeout
	}
	if o.MaxBody <= 0 {
		o.MaxBody = DefaultForwardAuthMaxBody
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	tr := &http.Transport{
		Proxy:               nil, // never through an environment proxy
		DialContext:         (&net.Dialer{Timeout: o.Timeout}).DialContext,
		MaxIdleConnsPerHost: forwardAuthIdle,
		IdleConnTimeout:     time.Minute,
	}
	f := &ForwardAuth{o: o, u: u, tr: tr, client: &http.Client{
		Transport: tr,
		Timeout:   o.Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}}
	for _, h := range o.CopyHeaders {
		f.copy = append(f.copy, textproto.CanonicalMIMEHeaderKey(h))
	}
	return f, nil
}

// Close releases the idle connections to the service.
func (f *ForwardAuth) Close() { f.tr.CloseIdleConnections() }

// skipAuthField: client fields not sent to the auth service.
func skipAuthField(hs phttp.Headers, name []byte) bool {
	for _, s := range []string{"Connection", "Proxy-Connection", "Keep-Alive", "TE", "Transfer-Encoding", "Upgrade",
		"Content-Length", "Expect", "Host", "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto",
		"X-Forwarded-Method", "X-Forwarded-Uri", "X-Forwarded-Port"} {
		if phttp.EqualFold(name, s) {
			return true
		}
	}
	return false
}

// Check asks the service about r. true: r may go on (copy_headers are on
// it); false: the answer was written to w.
func (f *ForwardAuth) Check(w *server.ResponseWriter, r *server.Request) bool {
	ctx, cancel := context.WithTimeout(context.Background(), f.o.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.o.URL, nil)
	if err != nil {
		f.fail(w, 502, err)
		return false
	}
	for _, h := range r.Headers() {
		if skipAuthField(r.Headers(), h.Name) {
			continue
		}
		req.Header.Add(string(h.Name), string(h.Value))
	}
	req.Header.Set("X-Forwarded-Method", string(r.Method()))
	req.Header.Set("X-Forwarded-Uri", string(r.Target()))
	if h := r.Host(); h != nil {
		req.Header.Set("X-Forwarded-Host", string(h))
	}
	proto := "http"
	if r.TLS() {
		proto = "https"
	}
	req.Header.Set("X-Forwarded-Proto", proto)
	if ip := r.ClientIP(); ip.IsValid() {
		req.Header.Set("X-Forwarded-For", ip.String())
	}
	resp, err := f.client.Do(req)
	if err != nil {
		status := 502
		if errors.Is(err, context.DeadlineExceeded) || isTimeout(err) {
			status = 504
		}
		f.fail(w, status, err)
		return false
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		for _, name := range f.copy {
			var v []byte
			if vs := resp.Header[name]; len(vs) > 0 {
				v = []byte(vs[0])
			}
			r.SetHeader(name, v)
		}
		return true
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, f.o.MaxBody+1))
	if err != nil || int64(len(body)) > f.o.MaxBody {
		if err == nil {
			err = errForwardAuthBody
		}
		f.fail(w, 502, err)
		return false
	}
	for name, vs := range resp.Header {
		switch name {
		case "Connection", "Keep-Alive", "Proxy-Connection", "Te", "Transfer-Encoding", "Upgrade", "Content-Length", "Trailer", "Date":
			continue
		}
		for _, v := range vs {
			w.AddHeader(name, v)
		}
	}
	w.WriteHeader(resp.StatusCode)
	w.Write(body)
	return false
}

var errForwardAuthBody = errors.New("router: forward_auth response body over the limit")

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func (f *ForwardAuth) fail(w *server.ResponseWriter, status int, err error) {
	f.o.Logger.Warn("forward_auth failed", "url", f.o.URL, "status", status, "err", err)
	w.AddHeader("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	if status == 504 {
		w.WriteString("auth service timed out\n")
	} else {
		w.WriteString("auth service unavailable\n")
	}
}
