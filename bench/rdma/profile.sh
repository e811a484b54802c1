#!/usr/bin/env bash
# Per-request system calls of the like-for-like pair: fi_pingpong (tcp
# provider, 96 B, both processes busy-polling) and the transport's
# TransportVsTCP/pingpong/rdma_procs_busy row (two processes, both
# busy-polling), each run once under perf stat (system calls by kind and
# context switches, both processes together, per round trip) and once
# with systime.so preloaded (count and mean duration of each libc
# system-call wrapper the tcp provider uses, per process). Quiet machine
# only: a third busy process makes every figure here a scheduler figure.
#
# Needs perf, gcc, libfabric-dev and libfabric-bin.
# Usage: bench/rdma/profile.sh [ROUND_TRIPS]   (default 20000)
# RDMA_TEST=path profiles that rdma test binary (go test -tags rdma -c)
# instead of one built from this tree (an A/B against an older commit).
set -euo pipefail
N=${1:-20000}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
export PATH="$PATH:/usr/local/go/bin"
W=$(mktemp -d /tmp/rdma-profile.XXXXXX)
trap 'rm -rf "$W"' EXIT
if [ -n "${RDMA_TEST:-}" ]; then
	cp "$RDMA_TEST" "$W/rdma.test"
else
	(cd "$root" && go test -tags rdma -c -o "$W/rdma.test" ./rdma/)
fi
gcc -O2 -Wall -shared -fPIC -o "$W/systime.so" "$here/systime.c" -ldl
ev=context-switches
for s in futex nanosleep epoll_pwait epoll_wait epoll_ctl poll read write sendto recvfrom; do ev="$ev,syscalls:sys_enter_$s"; done
per() { # per FILE DIVISOR: perf stat -x, lines as name=count/DIVISOR
	awk -F, -v d="$2" '$1 ~ /^[0-9]/ {sub("syscalls:sys_enter_", "", $3); printf " %s=%.2f", $3, $1 / d} END {print ""}' "$1"
}
port=$((48000 + $$ % 1000))
# fipair SRVPREFIX CLIPREFIX: one fi_pingpong pair, each process under its
# prefix command (words; "env" for none).
fipair() {
	$1 fi_pingpong -p tcp -e msg -d lo -I "$N" -S 96 -B "$port" >/dev/null 2>&1 &
	local srv=$!
	sleep 0.3
	$2 fi_pingpong -p tcp -e msg -d lo -I "$N" -S 96 -P "$port" 127.0.0.1 >/dev/null 2>&1
	wait "$srv"
	port=$((port + 1))
}
echo "# load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "## fi_pingpong, $N round trips: per round trip, each process"
fipair "perf stat -x, -e $ev -o $W/srv.stat --" "perf stat -x, -e $ev -o $W/cli.stat --"
echo -n "server:"; per "$W/srv.stat" "$N"
echo -n "client:"; per "$W/cli.stat" "$N"
fipair "env LD_PRELOAD=$W/systime.so SYSTIME_LOG=$W/fi.log" "env LD_PRELOAD=$W/systime.so SYSTIME_LOG=$W/fi.log"
awk '/send/' "$W/fi.log"
echo "## transport, two processes busy, $N requests: per request, both processes"
perf stat -x, -e "$ev" -o "$W/ours.stat" -- "$W/rdma.test" -test.run '^$' \
	-test.bench 'TransportVsTCP/pingpong/rdma_procs_busy' -test.benchtime "${N}x" 2>/dev/null | grep '^Benchmark'
echo -n "both:"; per "$W/ours.stat" "$N"
env LD_PRELOAD="$W/systime.so" SYSTIME_LOG="$W/ours.log" "$W/rdma.test" -test.run '^$' \
	-test.bench 'TransportVsTCP/pingpong/rdma_procs_busy' -test.benchtime "${N}x" 2>/dev/null | grep '^Benchmark'
awk '/send/' "$W/ours.log"
