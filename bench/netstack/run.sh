#!/usr/bin/env bash
# TCP on the userspace stack (AF_XDP native mode + gVisor, xdp/netstack)
# against kernel TCP, same server core and handler, same veth pair between
# two network namespaces the benchmark creates and removes (needs root).
# Keep-alive "GET /" with a 3-byte answer over 16 connections from a Go
# client; the server helper is pinned to CPU 0, the client to CPU 1.
# Packets are built by the client's kernel (veth), not by a NIC.
#
# Usage: bench/netstack/run.sh [COUNT] [BENCHTIME]   (default 10 rounds of 2s)
# Writes the raw results to $OUT (default /tmp/netstack-bench.txt) and
# prints benchstat's comparison of the two transports.
set -euo pipefail
COUNT=${1:-10}
BENCHTIME=${2:-2s}
OUT=${OUT:-/tmp/netstack-bench.txt}
cd "$(dirname "$0")/../.."   # repository root
export PATH="$PATH:/usr/local/go/bin"
W=$(mktemp -d /tmp/netstack-bench.XXXXXX)
trap 'rm -rf "$W"' EXIT
go test -c -o "$W/netstack.test" ./xdp/netstack/
# One process per round (go test's -count would run all kernel rounds,
# then all gVisor rounds): each round builds its own namespaces and helper
# and runs kernel and gVisor back to back, so they share the noise.
: > "$OUT"
for i in $(seq "$COUNT"); do
	taskset -c 1 "$W/netstack.test" -test.run '^$' -test.bench VethKeepAlive \
		-test.benchtime "$BENCHTIME" | tee -a "$OUT"
done
cd bench && go tool benchstat -col /transport "$OUT"
