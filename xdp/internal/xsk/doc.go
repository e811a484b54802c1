// Package xsk is simdedge's AF_XDP socket: one UMEM and the four rings the
// kernel shares with user space (fill, RX, TX, completion), bound to one RX
// queue of one interface.
//
// The rings follow the kernel's single-producer/single-consumer protocol
// (Documentation/networking/af_xdp.rst): the producer publishes entries by
// storing its index after writing them, the consumer releases entries by
// storing its index after reading them. Both indices live in memory shared
// with the kernel, so every load and store of them is atomic (sync/atomic
// is sequentially consistent, which covers the acquire/release pairs the
// kernel expects); each side keeps a cached copy of the other side's index
// and reloads it only when the cache says the ring is full or empty.
//
// The package does not lock: Socket documents which goroutine may touch
// which ring, and package xdp holds the locks.
package xsk
