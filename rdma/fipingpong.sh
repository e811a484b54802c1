#!/bin/bash
# fipingpong.sh runs libfabric's own fi_pingpong (Debian libfabric-bin) over
# loopback and prints its figures as Go benchmark lines, so that benchstat
# compares them with BenchmarkPingPong:
#
#   BenchmarkFiPingpong/<provider>/<size> <iterations> <ns> ns/op <cpu> cpu-ns/op
#
# ns/op is one round trip (fi_pingpong's usec/xfer is half of one), cpu-ns/op
# the CPU time (user + system) of both processes per round trip, as
# BenchmarkPingPong's cpu-ns/op covers both ends in one process.
# fi_pingpong busy-polls its completion queue, like BenchmarkPingPong's
# "poll" mode. Its start-up (libfabric loading its providers, fi_getinfo,
# connect, registration) costs about 0.25 s of CPU for the two processes,
# as much as thousands of round trips, so each measurement also runs a
# 10-iteration exchange and counts only the difference.
#
# usage: rdma/fipingpong.sh [-p provider] [-n iterations] [-c rounds] [sizes...]
set -euo pipefail
prov=tcp iters=10000 rounds=1
while getopts p:n:c: o; do
	case $o in
	p) prov=$OPTARG ;;
	n) iters=$OPTARG ;;
	c) rounds=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
sizes=("${@:-64 4096}")
read -r -a sizes <<<"${sizes[*]}"
command -v fi_pingpong >/dev/null || { echo "fi_pingpong missing: apt-get install libfabric-bin" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
port=$((47000 + $$ % 1000))
# run ITERATIONS SIZE prints the CPU seconds of both processes and the
# client's usec/xfer.
run() {
	# -d lo: the tcp provider's loopback domain (else it takes eth0).
	local dom=()
	[ "$prov" = tcp ] && dom=(-d lo)
	# bash's time keyword, to the millisecond (GNU time prints 10 ms
	# steps: with 10,000 round trips that was ±4 µs per round trip).
	(
		TIMEFORMAT='%3U %3S'
		time fi_pingpong -p "$prov" -e msg "${dom[@]}" -I "$1" -S "$2" -B "$port" >"$tmp/srv.out" 2>&1
	) 2>"$tmp/srv.time" &
	local srv=$!
	sleep 0.3
	(
		TIMEFORMAT='%3U %3S'
		time fi_pingpong -p "$prov" -e msg "${dom[@]}" -I "$1" -S "$2" -P "$port" 127.0.0.1 >"$tmp/cli.out" 2>&1
	) 2>"$tmp/cli.time"
	wait "$srv"
	port=$((port + 1))
	# The result line: bytes #sent #ack total time MB/sec usec/xfer Mxfers/sec
	local usec cpu
	usec=$(awk '$1 ~ /^[0-9]/ && NF >= 8 {print $7}' "$tmp/cli.out" | tail -1)
	cpu=$(cat "$tmp/srv.time" "$tmp/cli.time" | awk '{t += $1 + $2} END {print t}')
	echo "$cpu $usec"
}
for ((r = 0; r < rounds; r++)); do
	for s in "${sizes[@]}"; do
		read -r base _ < <(run 10 "$s")
		read -r cpu usec < <(run "$iters" "$s")
		name=$s
		[ "$s" = 64 ] && name=64B
		[ "$s" = 4096 ] && name=4KiB
		awk -v p="$prov" -v n="$name" -v i="$iters" -v u="$usec" -v c="$cpu" -v b="$base" \
			'BEGIN {printf "BenchmarkFiPingpong/%s/%s-2 %d %.0f ns/op %.0f cpu-ns/op\n", p, n, i, 2 * u * 1000, (c - b) * 1e9 / (i - 10)}'
	done
done
