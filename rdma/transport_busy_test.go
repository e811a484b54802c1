//go:build rdma && cgo

package rdma_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/simdedge/simdedge/rdma"
)

// busyRequests sends n requests one at a time, a rendezvous response part
// every tenth, and checks every answer (used in both poll modes).
func busyRequests(t *testing.T, c *rdma.Client, n int) {
	t.Helper()
	for i := range n {
		target := fmt.Sprintf("/seq/%d", i)
		if i%10 == 9 {
			target = "/size/20000"
		}
		resp, err := wholeRoundTrip(c, []byte("GET "+target+" HTTP/1.1\r\nHost: x\r\n\r\n"))
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if i%10 == 9 {
			if !bytes.Equal(responseBody(t, resp), bodyPattern(20000)) {
				t.Fatalf("request %d: rendezvous body differs", i)
			}
		} else if got := string(responseBody(t, resp)); got != "GET "+target+" 0 e3b0c442" {
			t.Fatalf("request %d: %q", i, got)
		}
	}
}

// TestTransportBusyPoll: with PollBusy at both ends, requests one at a
// time and pipelined far beyond the credit window all get their answers,
// and once the connection is idle both pollers stop spinning and block
// (an idle server must not burn a core).
func TestTransportBusyPoll(t *testing.T) {
	needTransport(t)
	const credits = 6
	ml, addr := startBackend(t, rdma.ListenConfig{Credits: credits, MessageSize: 4096, Poll: rdma.PollBusy}, echoHandler)
	c := dialClient(t, addr, rdma.DialOptions{Credits: credits, MessageSize: 4096, Poll: rdma.PollBusy, Spin: rdma.MaxSpin})
	busyRequests(t, c, 100)

	callersDo(t, 4*credits, 10, func(g, i int) error {
		target := fmt.Sprintf("/g%d/%d", g, i)
		resp, err := wholeRoundTrip(c, []byte("GET "+target+" HTTP/1.1\r\nHost: x\r\n\r\n"))
		if err != nil {
			return err
		}
		if !bytes.HasSuffix(resp, []byte("\r\n\r\nGET "+target+" 0 e3b0c442")) {
			return fmt.Errorf("%.200q", resp)
		}
		return nil
	})
	waitFor(t, "the idle client's queue reader blocks", func() bool { return rdma.ClientParked(c) })
	waitFor(t, "the idle server's poller blocks", func() bool {
		parked, conns := rdma.ListenerParked(ml)
		return conns == 1 && parked == 1
	})
	// A request after the idle period wakes both again.
	busyRequests(t, c, 10)
}

// TestTransportBusyPollProcesses: a busy-polling backend in a second
// process, a busy-polling client here.
func TestTransportBusyPollProcesses(t *testing.T) {
	needTransport(t)
	_, addr, stop := startBackendProcess(t, rdma.PollBusy)
	c := dialClient(t, addr, rdma.DialOptions{Credits: 8, MessageSize: 4096, Poll: rdma.PollBusy})
	busyRequests(t, c, 100)
	c.Close()
	if err := stop(); err != nil {
		t.Fatalf("backend: %v", err)
	}
}
