package netstack_test

import (
	"fmt"
	"net"
	"net/netip"

	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/xdp/netstack"
)

// nullDevice stands in for an AF_XDP socket of package xdp: it has a MAC
// and an MTU and drops what it is given to send.
type nullDevice struct{}

func (nullDevice) MAC() net.HardwareAddr   { return net.HardwareAddr{0x02, 0, 0, 0, 0, 1} }
func (nullDevice) MTU() int                { return 1500 }
func (nullDevice) Transmit(f []byte) error { return nil }

// The server core serves a Stack's listener exactly as it serves kernel
// TCP; the transport's RX loop feeds the stack with Deliver.
func Example() {
	st, err := netstack.New(netstack.Config{Address: netip.MustParseAddr("198.18.0.1"), Port: 8080}, nullDevice{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()
	srv := server.New(server.Options{Handler: server.HandlerFunc(func(w *server.ResponseWriter, r *server.Request) {
		w.WriteString("hello over userspace TCP\n")
	})})
	defer srv.Close()
	go srv.ServeStream(st.Listener())

	// The RX loop of the AF_XDP socket calls st.Deliver(frame) for every
	// frame the XDP program steered to port 8080.
	fmt.Println("serving", st.Listener().Addr())
	// Output: serving 198.18.0.1:8080
}
