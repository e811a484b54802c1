package http

import (
	"reflect"
	"testing"

	"github.com/simdedge/simdedge/asm"
)

// reqResult is what a parse produced, copied out of the Request so results
// of different walks can be compared.
type reqResult struct {
	N             int
	Err           error
	Method        string
	Target        string
	Version       Version
	Headers       []string // "name: value"
	Host          string
	Body          BodyKind
	ContentLength int64
	Close         bool
	Expect100     bool
	Upgrade       string
}

func snapshotRequest(n int, err error, r *Request) reqResult {
	if err != nil {
		return reqResult{Err: err}
	}
	res := reqResult{
		N: n, Method: string(r.Method), Target: string(r.Target), Version: r.Version,
		Host: string(r.Host), Body: r.Body, ContentLength: r.ContentLength,
		Close: r.Close, Expect100: r.Expect100, Upgrade: string(r.Upgrade),
	}
	for _, h := range r.Headers {
		res.Headers = append(res.Headers, string(h.Name)+": "+string(h.Value))
	}
	return res
}

// walkConfigs lists every way the head walker can run: the scalar walk,
// and the mask walk at each asm level this CPU supports.
type walkConfig struct {
	mode  walkMode
	level asm.Level
}

func (c walkConfig) String() string {
	if c.mode == walkScalar {
		return "scalar"
	}
	return "masks-" + c.level.String()
}

func walkConfigs() []walkConfig {
	cs := []walkConfig{{mode: walkScalar, level: asm.Generic}}
	for _, l := range asm.Levels() {
		cs = append(cs, walkConfig{mode: walkMasks, level: l})
	}
	return cs
}

// withWalk runs f with the walker forced to c and restores the defaults.
func withWalk(c walkConfig, f func()) {
	prevLevel := asm.SetLevel(c.level)
	prevMode := forceWalk
	forceWalk = c.mode
	defer func() {
		forceWalk = prevMode
		asm.SetLevel(prevLevel)
	}()
	f()
}

// headerCaps are the Headers capacities each walk is run with: a new
// message (0, every field appended by the general walk), a reused one too
// small for the head (the fast walk stops when full and goes on after the
// general walk grows it), and one with room for every field (the fast walk
// takes every common line, as on a reused connection).
var headerCaps = [...]int{0, 3, DefaultMaxHeaders + 1}

// parseReqAll parses in with every walk configuration and Headers
// capacity, fails the test if any two disagree, and returns the common
// result.
func parseReqAll(tb testing.TB, p *Parser, in []byte) reqResult {
	tb.Helper()
	var first reqResult
	var firstCfg walkConfig
	for i, c := range walkConfigs() {
		for j, hc := range headerCaps {
			var got reqResult
			withWalk(c, func() {
				req := Request{Headers: make(Headers, 0, hc)}
				n, err := p.ParseRequest(in, &req)
				got = snapshotRequest(n, err, &req)
			})
			if i == 0 && j == 0 {
				first, firstCfg = got, c
				continue
			}
			if !reflect.DeepEqual(first, got) {
				tb.Fatalf("walks disagree on %q:\n%v: %+v\n%v (headers cap %d): %+v", in, firstCfg, first, c, hc, got)
			}
		}
	}
	return first
}

type respResult struct {
	N             int
	Err           error
	Version       Version
	Status        int
	Reason        string
	Headers       []string
	Body          BodyKind
	ContentLength int64
	Close         bool
	Upgrade       string
}

func parseRespAll(tb testing.TB, p *Parser, in []byte, head bool) respResult {
	tb.Helper()
	var first respResult
	var firstCfg walkConfig
	for i, cc := range walkConfigs() {
		for j, hc := range headerCaps {
			c := cc
			var got respResult
			withWalk(c, func() {
				r := Response{Headers: make(Headers, 0, hc)}
				var n int
				var err error
				if head {
					n, err = p.ParseHEADResponse(in, &r)
				} else {
					n, err = p.ParseResponse(in, &r)
				}
				if err != nil {
					got = respResult{Err: err}
					return
				}
				got = respResult{N: n, Version: r.Version, Status: r.Status, Reason: string(r.Reason),
					Body: r.Body, ContentLength: r.ContentLength, Close: r.Close, Upgrade: string(r.Upgrade)}
				for _, h := range r.Headers {
					got.Headers = append(got.Headers, string(h.Name)+": "+string(h.Value))
				}
			})
			if i == 0 && j == 0 {
				first, firstCfg = got, c
				continue
			}
			if !reflect.DeepEqual(first, got) {
				tb.Fatalf("walks disagree on %q:\n%v: %+v\n%v (headers cap %d): %+v", in, firstCfg, first, c, hc, got)
			}
		}
	}
	return first
}
