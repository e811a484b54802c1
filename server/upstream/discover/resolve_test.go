package discover

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testdns"
	"github.com/simdedge/simdedge/server/upstream"
	"golang.org/x/net/dns/dnsmessage"
)

func names(t *testing.T, targets ...string) []Name {
	t.Helper()
	var out []Name
	for _, s := range targets {
		n, err := ParseName(s, 2)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		out = append(out, n)
	}
	return out
}

func addrs(ts []upstream.TargetSpec) string {
	var s []string
	for _, t := range ts {
		s = append(s, t.Address+"/"+string(rune('0'+t.Weight)))
	}
	return strings.Join(s, " ")
}

func TestParseName(t *testing.T) {
	for in, want := range map[string]error{
		"api.internal:80":                      nil,
		"dns+srv://_http._tcp.api.test":        nil,
		"dns+srv://_http._tcp.api.test.":       nil,
		"127.0.0.1:80":                         ErrIsIP,
		"[::1]:80":                             ErrIsIP,
		"api.internal":                         ErrTarget,
		"api.internal:0":                       ErrTarget,
		"api..internal:80":                     ErrTarget,
		"dns+srv://":                           ErrTarget,
		"dns+srv://bad name":                   ErrTarget,
		"ap\x00i:80":                           ErrTarget,
		"a" + strings.Repeat(".a", 200) + ":1": ErrTarget,
	} {
		if _, err := ParseName(in, 1); err != want {
			t.Errorf("%q: %v, want %v", in, err, want)
		}
	}
}

// TestResolveA: A records with their TTL, sorted, with the configured
// port and weight; the refresh follows the TTL only with RespectTTL, and
// stays within MinRefresh.
func TestResolveA(t *testing.T) {
	z := testdns.NewZone(7)
	z.SetA("api.test", "127.0.0.3", "127.0.0.2", "::1")
	srv := testdns.Serve(t, z)
	for _, tc := range []struct {
		o     Options
		want  string
		after time.Duration
	}{
		{Options{Servers: []string{srv}, RespectTTL: true, Family: FamilyIPv4}, "127.0.0.2:80/2 127.0.0.3:80/2", 7 * time.Second},
		{Options{Servers: []string{srv}, Interval: 3 * time.Second}, "127.0.0.2:80/2 127.0.0.3:80/2 [::1]:80/2", 3 * time.Second},
		{Options{Servers: []string{srv}, Family: FamilyIPv6}, "[::1]:80/2", DefaultInterval},
	} {
		got, after, err := New(tc.o).Resolve(context.Background(), names(t, "api.test:80"))
		if err != nil || addrs(got) != tc.want || after != tc.after {
			t.Errorf("%+v: %q after %v (%v), want %q after %v", tc.o, addrs(got), after, err, tc.want, tc.after)
		}
	}
	z.SetTTL(0)
	if _, after, _ := New(Options{Servers: []string{srv}, RespectTTL: true}).Resolve(context.Background(), names(t, "api.test:80")); after != MinRefresh {
		t.Errorf("TTL 0: refresh after %v, want %v", after, MinRefresh)
	}
}

// TestResolveSRV: only the lowest priority, weights mapped onto the
// pool's range, targets from the glue when the answer has it (no A
// question then) or asked for.
func TestResolveSRV(t *testing.T) {
	z := testdns.NewZone(30)
	z.SetA("a.test", "127.0.0.2")
	z.SetA("b.test", "127.0.0.3")
	z.SetA("c.test", "127.0.0.4")
	z.SetSRV("_http._tcp.svc.test",
		testdns.SRV{Priority: 1, Weight: 0, Port: 8001, Target: "a.test"},
		testdns.SRV{Priority: 1, Weight: 5000, Port: 8002, Target: "b.test"},
		testdns.SRV{Priority: 2, Weight: 5, Port: 8003, Target: "c.test"})
	srv := testdns.Serve(t, z)
	r := New(Options{Servers: []string{srv}, RespectTTL: true, Family: FamilyIPv4})
	for _, glue := range []bool{false, true} {
		z.Glue.Store(glue)
		before := z.Count(dnsmessage.TypeA)
		got, after, err := r.Resolve(context.Background(), names(t, "dns+srv://_http._tcp.svc.test"))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got[0] != (upstream.TargetSpec{Address: "127.0.0.2:8001", Weight: 1}) ||
			got[1] != (upstream.TargetSpec{Address: "127.0.0.3:8002", Weight: upstream.MaxWeight}) || after != 30*time.Second {
			t.Errorf("glue %v: %v after %v", glue, got, after)
		}
		if asked := z.Count(dnsmessage.TypeA) - before; glue && asked != 0 || !glue && asked != 2 {
			t.Errorf("glue %v: %d A questions", glue, asked)
		}
	}
}

// TestResolveTruncated: a truncated UDP answer is asked again over TCP.
func TestResolveTruncated(t *testing.T) {
	z := testdns.NewZone(5)
	z.SetA("api.test", "127.0.0.9")
	z.Truncate.Store(true)
	got, _, err := New(Options{Servers: []string{testdns.Serve(t, z)}, Family: FamilyIPv4}).Resolve(context.Background(), names(t, "api.test:1"))
	if err != nil || addrs(got) != "127.0.0.9:1/2" {
		t.Fatalf("%q %v", addrs(got), err)
	}
}

// TestResolveFailures: a missing name, and a server that is not there.
func TestResolveFailures(t *testing.T) {
	z := testdns.NewZone(5)
	srv := testdns.Serve(t, z)
	if _, _, err := New(Options{Servers: []string{srv}}).Resolve(context.Background(), names(t, "nope.test:1")); !errors.Is(err, ErrNXDomain) {
		t.Errorf("missing name: %v", err)
	}
	z.SetA("empty.test")
	if _, _, err := New(Options{Servers: []string{srv}}).Resolve(context.Background(), names(t, "empty.test:1")); !errors.Is(err, ErrEmpty) {
		t.Errorf("no records: %v", err)
	}
	if _, _, err := New(Options{Servers: []string{"127.0.0.1:1"}, Timeout: time.Second}).Resolve(context.Background(), names(t, "a.test:1")); err == nil {
		t.Error("no server: no error")
	}
}

// changeWait bounds waiting for a watcher to see a change (TTL 1 s).
const changeWait = 15 * time.Second

// TestWatcher: a changed answer is reported once it is current; a failed
// lookup keeps the last answer and reports nothing.
func TestWatcher(t *testing.T) {
	z := testdns.NewZone(1)
	z.SetA("api.test", "127.0.0.2")
	w := NewWatcher(New(Options{Servers: []string{testdns.Serve(t, z)}, RespectTTL: true, Family: FamilyIPv4}), names(t, "api.test:80"), nil)
	if err := w.Resolve(context.Background()); err != nil {
		t.Fatal(err)
	}
	changed := make(chan []upstream.TargetSpec, 4)
	w.Start(func() { changed <- w.Targets() })
	defer w.Stop()
	z.SetA("api.test", "127.0.0.3", "127.0.0.2")
	select {
	case got := <-changed:
		if addrs(got) != "127.0.0.2:80/2 127.0.0.3:80/2" {
			t.Fatalf("after the change: %q", addrs(got))
		}
	case <-time.After(changeWait):
		t.Fatal("no change reported")
	}
	z.SetA("api.test") // empty: kept
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case got := <-changed:
			t.Fatalf("an empty answer was reported as a change: %q", addrs(got))
		case <-time.After(100 * time.Millisecond):
		}
	}
	if got := w.Targets(); !slices.Equal(got, []upstream.TargetSpec{{Address: "127.0.0.2:80", Weight: 2}, {Address: "127.0.0.3:80", Weight: 2}}) {
		t.Errorf("last answer not kept: %q", addrs(got))
	}
}

// FuzzParseAnswer: answers from the network never panic the parser, and
// what it returns is bounded.
func FuzzParseAnswer(f *testing.F) {
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: 7, Response: true})
	b.StartQuestions()
	b.Question(dnsmessage.Question{Name: dnsmessage.MustNewName("a.test."), Type: dnsmessage.TypeSRV, Class: dnsmessage.ClassINET})
	b.StartAnswers()
	b.SRVResource(dnsmessage.ResourceHeader{Name: dnsmessage.MustNewName("a.test."), Class: dnsmessage.ClassINET, TTL: 5},
		dnsmessage.SRVResource{Priority: 1, Weight: 2, Port: 80, Target: dnsmessage.MustNewName("b.test.")})
	b.StartAdditionals()
	b.AResource(dnsmessage.ResourceHeader{Name: dnsmessage.MustNewName("b.test."), Class: dnsmessage.ClassINET, TTL: 5},
		dnsmessage.AResource{A: [4]byte{127, 0, 0, 1}})
	msg, _ := b.Finish()
	f.Add(msg)
	f.Add([]byte{0, 7, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, ans []byte) {
		recs, _, err := parseAnswer(ans, 7)
		if err == nil && len(recs) > maxRecords {
			t.Fatalf("%d records", len(recs))
		}
	})
}

// TestResolveSystem: without servers the system resolver answers (here
// from /etc/hosts), and with no TTL the interval applies.
func TestResolveSystem(t *testing.T) {
	got, after, err := New(Options{Interval: 7 * time.Second, RespectTTL: true, Family: FamilyIPv4}).
		Resolve(context.Background(), names(t, "localhost:80"))
	if err != nil {
		t.Skipf("the system resolver does not know localhost here: %v", err)
	}
	if addrs(got) != "127.0.0.1:80/2" || after != 7*time.Second {
		t.Errorf("localhost: %q after %v, want 127.0.0.1:80 after the interval", addrs(got), after)
	}
}
