package xdp_test

import (
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/netip"

	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/xdp"
)

// Serve HTTP requests in UDP datagrams on port 8081 of eth0, straight from
// the UMEM. Listen needs root (or CAP_BPF, CAP_NET_ADMIN, CAP_NET_RAW); its
// errors say what is missing.
func ExampleListen() {
	l, err := xdp.Listen(xdp.Config{
		Interface: "eth0",
		Address:   netip.MustParseAddr("198.18.0.1"),
		UDPPort:   8081,
	})
	if errors.Is(err, xdp.ErrPermission) || errors.Is(err, xdp.ErrNoInterface) {
		log.Print(err) // e.g. "xdp: permission denied: ... (missing CAP_BPF)"
		return
	}
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close() // detaches the program
	srv := server.New(server.Options{Handler: server.HandlerFunc(func(w *server.ResponseWriter, r *server.Request) {
		w.WriteString("hello\n")
	})})
	log.Print(srv.ServeMessages(l.Datagrams()))
}

// A request to the datagram fast path from any host, over a plain UDP
// socket.
func ExampleDatagramClient() {
	c, err := xdp.DialDatagram("198.18.0.1:8081")
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	req, _ := http.NewRequest("GET", "http://edge/healthz", nil)
	resp, err := c.Do(req)
	if errors.Is(err, xdp.ErrUseTCP) {
		// The response does not fit one datagram: ask over TCP.
		resp, err = http.Get("http://198.18.0.1:8080/healthz")
	}
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.Status)
}
