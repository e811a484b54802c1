//go:build rdma && cgo

package rdma_test

import (
	"bytes"
	"testing"

	"github.com/simdedge/simdedge/rdma"
)

func TestSendRecv(t *testing.T) {
	f := openFabric(t, "tcp")
	p := connect(t, f)
	sr := register(t, f, 1<<16)
	cr := register(t, f, 1<<16)
	if err := p.server.PostRecv(sr, 100, 4096, 7); err != nil {
		t.Fatal(err)
	}
	msg := []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	copy(cr.Bytes()[200:], msg)
	if err := p.client.PostSend(cr, 200, len(msg), 9); err != nil {
		t.Fatal(err)
	}
	cs := collect(t, p.client, 1)
	if cs[0].ID != 9 || cs[0].Op != rdma.OpSend || cs[0].Err != nil || cs[0].Len != len(msg) {
		t.Errorf("send completion %+v", cs[0])
	}
	ss := collect(t, p.server, 1)
	if ss[0].ID != 7 || ss[0].Op != rdma.OpRecv || ss[0].Err != nil || ss[0].Len != len(msg) {
		t.Errorf("recv completion %+v", ss[0])
	}
	if got := sr.Bytes()[100 : 100+ss[0].Len]; !bytes.Equal(got, msg) {
		t.Errorf("received %q, want %q", got, msg)
	}
	t.Logf("provider %s, client %s -> server %s, max message %d", f.Provider(), p.client.LocalAddr(), p.client.RemoteAddr(), p.client.MaxMessage())
}
