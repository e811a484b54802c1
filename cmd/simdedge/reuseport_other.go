//go:build !linux

package main

import "syscall"

// reusePort is nil off Linux: several loops on one address need
// SO_REUSEPORT's load spreading (and the loop engine needs epoll).
var reusePort func(network, address string, c syscall.RawConn) error
