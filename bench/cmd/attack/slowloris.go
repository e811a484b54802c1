package main

import (
	"context"
	"fmt"
	"time"
)

const (
	// slowClients send a request head slowEvery a byte and never end it.
	slowClients = 50
	slowEvery   = time.Second
)

// runSlowloris: request heads sent a byte at a time.
func runSlowloris(ctx context.Context, o *options, v variant) row {
	r := row{scenario: "slowloris", v: v}
	bound := paramsFor(o).slowBound
	s, err := startServer(ctx, o, v)
	if err != nil {
		r.result = "error: " + err.Error()
		return r
	}
	defer s.stop()
	// A head that never ends: a valid start, then a header line that
	// grows a byte at a time.
	head := fmt.Sprintf("GET %s HTTP/1.1\r\nHost: %s\r\nX-Slow: ", echoPath, host)
	outs := dripAll(ctx, s, slowClients, []byte(head), slowEvery, bound, nil)
	r.result = summarize(outs.outcomes, bound)
	return r
}
