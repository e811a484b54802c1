#!/usr/bin/env bash
# The datagram fast path (AF_XDP, xdp.Listener) against the same handler
# behind a kernel UDP socket, fed raw frames by a BPF_PROG_TEST_RUN
# live-frames generator that models a NIC (see doc.go: how the packets are
# produced). Needs root: it creates and removes two veth pairs between
# network namespaces of its own.
#
# Usage: bench/xdp/run.sh [COUNT] [BENCHTIME]   (default 10 rounds of 1s)
# BENCH=TCPKeepAlive runs the TCP benchmark instead: gVisor over AF_XDP
# against kernel TCP, fed by the raw-frame TCP generator (doc.go).
# Writes the raw results to $OUT (default /tmp/xdp-bench.txt) and prints
# benchstat's comparison of the two transports. `make bench AREAS=xdp`
# runs the same benchmark inside the suite's report.
set -euo pipefail
COUNT=${1:-10}
BENCHTIME=${2:-1s}
BENCH=${BENCH:-Datagram}
OUT=${OUT:-/tmp/xdp-bench.txt}
cd "$(dirname "$0")/.."   # the bench module
export PATH="$PATH:/usr/local/go/bin"
W=$(mktemp -d /tmp/xdp-bench.XXXXXX)
trap 'rm -rf "$W"' EXIT
go test -c -o "$W/xdp.test" ./xdp/
# One process per round, each running both transports back to back, so
# the machine's noise falls on both alike.
: > "$OUT"
for i in $(seq "$COUNT"); do
	"$W/xdp.test" -test.run '^$' -test.bench "^Benchmark$BENCH\$" -test.benchmem \
		-test.benchtime "$BENCHTIME" | tee -a "$OUT"
done
go tool benchstat -col /transport "$OUT"
