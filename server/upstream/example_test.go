package upstream_test

import (
	"fmt"

	"github.com/simdedge/simdedge/server/upstream"
)

// An engine's view of a pool: select, report, decide. The first target
// refuses connections; the request fails over to the next one without
// spending a retry.
func Example() {
	p, err := upstream.New(upstream.Options{
		Name: "api",
		Targets: []upstream.TargetSpec{
			{Address: "127.0.0.1:9001"},
			{Address: "127.0.0.1:9002", Weight: 3},
		},
		Balance: upstream.RoundRobin,
	})
	if err != nil {
		panic(err)
	}
	refused := map[string]bool{"127.0.0.1:9002": true}
	var rs upstream.RetryState
	for {
		t, err := p.SelectNext(nil, &rs)
		if err != nil {
			fmt.Println("503:", err)
			break
		}
		if refused[t.Address()] {
			p.Done(t, upstream.Result{Outcome: upstream.ConnectFailure})
			d := p.Decide(&rs, t, upstream.Facts{Result: upstream.Result{Outcome: upstream.ConnectFailure}})
			fmt.Println(t.Address(), "refused:", d)
			continue
		}
		p.Done(t, upstream.StatusResult(200))
		fmt.Println(t.Address(), "answered 200")
		break
	}
	fmt.Println("retries spent:", rs.Retries)
	p.Finish(&rs)
	// Output:
	// 127.0.0.1:9002 refused: failover
	// 127.0.0.1:9001 answered 200
	// retries spent: 0
}
