package config

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/simdedge/simdedge/server/proxy"
)

type fakeTarget struct {
	u      *url.URL
	closed int
}

func (f *fakeTarget) RoundTrip([]byte, time.Duration, func([]byte, bool) error) error { return nil }
func (f *fakeTarget) Close() error                                                    { f.closed++; return nil }

func TestSchemes(t *testing.T) {
	const cfg = `upstreams:
  - name: backends
    targets: ["rdma://127.0.0.1:7471?provider=tcp", "rdma://127.0.0.1:7472"]
routes:
  - match: {path_prefix: /}
    proxy: {upstream: backends}
`
	c, err := Parse([]byte(cfg))
	if err != nil {
		t.Fatal(err)
	}
	var opened []*fakeTarget
	schemes := map[string]func(*url.URL) (proxy.MessageTarget, error){
		"rdma": func(u *url.URL) (proxy.MessageTarget, error) {
			f := &fakeTarget{u: u}
			opened = append(opened, f)
			return f, nil
		},
	}
	s, err := c.Build(BuildOptions{Schemes: schemes})
	if err != nil {
		t.Fatal(err)
	}
	if len(opened) != 2 || opened[0].u.Host != "127.0.0.1:7471" || opened[0].u.Query().Get("provider") != "tcp" {
		t.Fatalf("opened %+v", opened)
	}
	s.Close()
	if opened[0].closed != 1 || opened[1].closed != 1 {
		t.Errorf("Snapshot.Close closed the targets %d and %d times", opened[0].closed, opened[1].closed)
	}

	// Without the scheme registered: an error at the target, no panic.
	_, err = c.Build(BuildOptions{})
	var ce *Error
	if !errors.As(err, &ce) || ce.Key != "upstreams[0].targets[0]" || !strings.Contains(ce.Msg, `scheme "rdma" is not supported`) {
		t.Errorf("unregistered scheme: %v", err)
	}

	// A scheme whose opener fails: the error names the target, and the
	// targets opened before it are closed.
	opened = nil
	n := 0
	schemes["rdma"] = func(u *url.URL) (proxy.MessageTarget, error) {
		if n++; n == 2 {
			return nil, errors.New("rdma: bad provider")
		}
		f := &fakeTarget{u: u}
		opened = append(opened, f)
		return f, nil
	}
	_, err = c.Build(BuildOptions{Schemes: schemes})
	if !errors.As(err, &ce) || ce.Key != "upstreams[0].targets[1]" || !strings.Contains(ce.Msg, "bad provider") {
		t.Errorf("failing opener: %v", err)
	}
	if len(opened) != 1 || opened[0].closed != 1 {
		t.Errorf("the first target was not closed: %+v", opened)
	}

	mixed, err := Parse([]byte(strings.Replace(cfg, `"rdma://127.0.0.1:7472"`, `"127.0.0.1:9000"`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mixed.Build(BuildOptions{Schemes: schemes}); !errors.As(err, &ce) || !strings.Contains(ce.Msg, "mixes") {
		t.Errorf("mixed targets: %v", err)
	}
}
