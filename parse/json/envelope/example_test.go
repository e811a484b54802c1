package envelope_test

import (
	"fmt"

	"github.com/simdedge/simdedge/parse/json/envelope"
)

func Example() {
	b := envelope.NewBuilder(0) // one per goroutine, reused
	buf := b.Build(&envelope.Parts{
		Method: []byte("POST"), Target: []byte("/api?x=1"), Version: 11,
		Headers: []envelope.Header{{Name: []byte("Content-Type"), Value: []byte("application/json")}},
		Body:    []byte(`{"a":1}`),
		URL:     &envelope.URL{Path: []byte("/api"), Query: []byte("x=1")},
	})
	// buf travels to a backend, which verifies before reading.
	v, err := envelope.Read(buf)
	if err != nil {
		fmt.Println(err)
		return
	}
	name, value := v.Header(0)
	u, _ := v.URL()
	fmt.Printf("%s %s %s: %s body=%s query=%s\n", v.Method(), v.Target(), name, value, v.Body(), u.Query)

	_, err = envelope.Read(buf[:len(buf)-1])
	fmt.Println(err)
	// Output:
	// POST /api?x=1 Content-Type: application/json body={"a":1} query=x=1
	// envelope: read: envelope offset or length out of bounds
}
