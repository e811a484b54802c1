package bpf

// The object is built for little-endian BPF (amd64, arm64); bpf2go writes
// steer_bpfel.go and steer_bpfel.o, both committed. The second include
// directory lets the same line work on arm64 hosts; clang ignores the
// missing one.
//go:generate go run github.com/cilium/ebpf/cmd/bpf2go -cc clang -cflags "-O2 -g -Wall -Werror -I/usr/include/x86_64-linux-gnu -I/usr/include/aarch64-linux-gnu" -target bpfel Steer steer.c
