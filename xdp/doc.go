// Package xdp is the AF_XDP (kernel bypass) transport for server.
package xdp
