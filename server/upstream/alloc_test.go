package upstream

import (
	"testing"
)

// TestSelectAllocs: selection, Done and key extraction allocate nothing,
// for every policy, healthy or degraded, with retries' Exclude sets.
func TestSelectAllocs(t *testing.T) {
	k, _ := ParseHashKey("cookie:session")
	r := &byteReq{cookie: []byte("a=1; session=abc"), target: []byte("/x")}
	for _, b := range balances {
		for _, degraded := range []bool{false, true} {
			p := newPool(t, Options{Targets: specs(6, 1, 2, 3), Balance: b, HashKey: k, MaxConnsPerTarget: 100})
			if degraded {
				eject(t, p, p.Targets()[0])
			}
			var rs RetryState
			n := testing.AllocsPerRun(1000, func() {
				x, err := p.Select(p.Key(r), &rs.Tried)
				if err != nil {
					t.Fatal(err)
				}
				p.Done(x, StatusResult(503))
				p.Decide(&rs, x, Facts{Result: StatusResult(503), Idempotent: true, Replayable: true, Written: true})
				p.Finish(&rs)
			})
			if n != 0 {
				t.Errorf("%s (degraded %v): %v allocations per request", b, degraded, n)
			}
		}
	}
}

func BenchmarkSelect(b *testing.B) {
	for _, bal := range balances {
		for _, n := range []int{3, 32} {
			b.Run(string(bal)+"/"+itoa(n), func(b *testing.B) {
				p := newPool(b, Options{Targets: specs(n, 1, 2, 3), Balance: bal})
				key := []byte("user-12345")
				b.ReportAllocs()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						x, _ := p.Select(key, nil)
						p.Done(x, StatusResult(200))
					}
				})
			})
		}
	}
}

func BenchmarkKey(b *testing.B) {
	k, _ := ParseHashKey("cookie:session")
	r := &byteReq{cookie: []byte("a=1; theme=dark; session=abc123"), target: []byte("/x")}
	b.ReportAllocs()
	for b.Loop() {
		_ = HashKeyBytes(k.Extract(r))
	}
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// byteReq is a KeySource over byte slices, as the server's request is
// (fakeReq converts strings, which allocates).
type byteReq struct{ cookie, target, ip []byte }

func (r *byteReq) Header(name string) ([]byte, bool) {
	if name == "Cookie" {
		return r.cookie, r.cookie != nil
	}
	return nil, false
}
func (r *byteReq) Target() []byte   { return r.target }
func (r *byteReq) RemoteIP() []byte { return r.ip }

// BenchmarkSelectSerial is one goroutine's cost per Select and Done,
// without contention on the counters.
func BenchmarkSelectSerial(b *testing.B) {
	for _, bal := range balances {
		b.Run(string(bal), func(b *testing.B) {
			p := newPool(b, Options{Targets: specs(8, 1, 2, 3), Balance: bal})
			key := []byte("user-12345")
			b.ReportAllocs()
			for b.Loop() {
				x, _ := p.Select(key, nil)
				p.Done(x, StatusResult(200))
			}
		})
	}
}
