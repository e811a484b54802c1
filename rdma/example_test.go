package rdma_test

import (
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/simdedge/simdedge/rdma"
)

// A client connects, posts a receive for the answer, sends one message from
// registered memory and waits for both completions. (Not run as a test: it
// needs a listening peer; see rdma_test.go.)
func Example() {
	f, err := rdma.OpenFabric(rdma.Options{Provider: "tcp", Node: "127.0.0.1"})
	if errors.Is(err, rdma.ErrNotSupported) {
		log.Fatal("built without -tags rdma")
	}
	if err != nil {
		log.Fatal(err) // names the provider and what libfabric said
	}
	defer f.Close()
	r, err := f.Register(1 << 16) // mmap'd, outside the Go heap
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	e, err := f.Dial("127.0.0.1:7471", 5*time.Second)
	if err != nil {
		log.Fatal(err)
	}
	defer e.Close()

	const answerID, requestID = 1, 2
	if err := e.PostRecv(r, 4096, 4096, answerID); err != nil {
		log.Fatal(err)
	}
	n := copy(r.Bytes(), "GET / HTTP/1.1\r\nHost: backend\r\n\r\n")
	if err := e.PostSend(r, 0, n, requestID); err != nil {
		log.Fatal(err)
	}
	var out [16]rdma.Completion
	for done := 0; done < 2; {
		k, err := e.Wait(out[:], time.Second) // one cgo call per batch
		if err != nil {
			log.Fatal(err)
		}
		for _, c := range out[:k] {
			if c.Err != nil {
				log.Fatal(c.Err)
			}
			if c.ID == answerID {
				fmt.Printf("%s\n", r.Bytes()[4096:4096+c.Len])
			}
			done++
		}
	}
}
