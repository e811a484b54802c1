#!/usr/bin/env bash
# HTTP/3 CPU per request over AF_XDP against kernel UDP: two simdedge
# processes in a server network namespace, one with an xdp listener with
# http3: true (QUIC on the xsk PacketConn), one with a TLS tcp listener with
# http3: true (a kernel UDP socket), both answering "ok\n" with one ECDSA
# P-256 certificate; bench/cmd/h3load in a client namespace across a veth
# pair sends the load.
#
# Servers on CPU 0 (taskset -c 0), the load generator on CPU 1. Rounds are
# interleaved; each is DURATION long. Server CPU is utime+stime from
# /proc/PID/stat over the run divided by the requests the generator
# counted. On veth the receive side's kernel work (the XDP program and the
# copy into the UMEM, or the UDP stack up to the socket queue) runs in the
# sender's softirq, on the client's CPU, for both transports alike; the
# figure is the server process's own CPU.
#
# Needs root: it creates and removes two network namespaces of its own.
# Only the processes this script starts are stopped, by PID.
#
# Usage: bench/h3/xdp.sh [ROUNDS] [DURATION]   (needs openssl, ip, ethtool)
# MODE=generic uses generic XDP instead of native (veth's driver mode).
# PROFILE=DIR: after the rounds, an 8 s CPU profile of each server (pprof
# from an admin listener on its loopback) under the same load, kept in DIR
# with the binary and the requests answered in each profile's window
# (DIR/NAME.load), so figures per request come from one run (decision 0048).
set -euo pipefail
ROUNDS=${1:-5}
DURATION=${2:-5s}
CONNS=${CONNS:-1}
STREAMS=${STREAMS:-8}
MODE=${MODE:-native}
cd "$(dirname "$0")/../.."   # repository root
W=$(mktemp -d /tmp/simdedge-h3xdp.XXXXXX)
NS=h3x$$
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	ip netns del "${NS}s" 2>/dev/null || true
	ip netns del "${NS}c" 2>/dev/null || true
	rm -rf "$W"
}
trap cleanup EXIT
export PATH="$PATH:/usr/local/go/bin"
go build -o "$W/simdedge" ./cmd/simdedge
(cd bench && go build -o "$W/h3load" ./cmd/h3load)
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
	-subj /CN=localhost -addext subjectAltName=DNS:localhost \
	-keyout "$W/key.pem" -out "$W/cert.pem" 2>/dev/null

SIP=198.18.0.1 CIP=198.18.0.2 P_XDP=19645 P_UDP=19646
ip netns add "${NS}s"
ip netns add "${NS}c"
ip link add "${NS}s" netns "${NS}s" type veth peer name "${NS}c" netns "${NS}c"
ip -n "${NS}s" addr add $SIP/24 dev "${NS}s"
ip -n "${NS}c" addr add $CIP/24 dev "${NS}c"
for n in s c; do
	ip -n "${NS}$n" link set lo up
	ip -n "${NS}$n" link set "${NS}$n" up
done
# veth leaves UDP checksums to an offload that never happens; the AF_XDP
# side verifies them.
ip netns exec "${NS}c" ethtool -K "${NS}c" tx off >/dev/null

ADMIN_XDP= ADMIN_UDP=
if [ -n "${PROFILE:-}" ]; then
	ADMIN_XDP='admin: {address: "127.0.0.1:9645", pprof: true}'
	ADMIN_UDP='admin: {address: "127.0.0.1:9646", pprof: true}'
fi
ROUTE='routes:
  - match: {path_prefix: /}
    respond: {status: 200, body: "ok\n", headers: {Content-Type: text/plain}}'
TLS="{certificates: [{cert: \"$W/cert.pem\", key: \"$W/key.pem\"}], min_version: \"1.3\"}"
cat >"$W/xdp.yaml" <<YAML
listeners:
  - transport: xdp
    http3: true
    tls: $TLS
    xdp: {interface: ${NS}s, address: $SIP, udp_port: $P_XDP, mode: $MODE}
$ADMIN_XDP
$ROUTE
YAML
cat >"$W/udp.yaml" <<YAML
engine: ${ENGINE:-loop}
listeners:
  - address: "$SIP:$P_UDP"
    tls: $TLS
    http3: true
$ADMIN_UDP
$ROUTE
YAML
. bench/load/lib.sh
start xdp 0 ip netns exec "${NS}s" "$W/simdedge" serve -config "$W/xdp.yaml"
start udp 0 ip netns exec "${NS}s" "$W/simdedge" serve -config "$W/udp.yaml"
sleep 2
load() { ip netns exec "${NS}c" taskset -c 1 "$W/h3load" "$@"; }
for u in https://$SIP:$P_XDP/ https://$SIP:$P_UDP/; do
	load -url "$u" -d 200ms >/dev/null || { echo "server at $u not answering over HTTP/3"; cat "$W"/*.out; exit 1; }
done

run() { # name pid url
	local t0 t1 out reqs errs secs
	t0=$(ticks "$2")
	out=$(load -url "$3" -conns "$CONNS" -streams "$STREAMS" -d "$DURATION")
	t1=$(ticks "$2")
	reqs=$(echo "$out" | awk '/^requests/ {print $2}')
	errs=$(echo "$out" | awk '/^errors/ {print $2}')
	secs=$(echo "$out" | awk '/^seconds/ {print $2}')
	[ "$errs" = 0 ] || echo "$1: $errs errors" >&2
	awk -v n="$1" -v q="$reqs" -v s="$secs" -v t=$((t1 - t0)) -v hz="$HZ" \
		'BEGIN { printf "%-24s %9.0f req/s  %7.2f us CPU/req\n", n, q / s, t * 1e6 / hz / q }'
}
echo "# $(date -u +%FT%TZ) rounds=$ROUNDS duration=$DURATION conns=$CONNS streams=$STREAMS mode=$MODE; $(nproc) CPUs, shared machine; $(go version | cut -d' ' -f3)"
for r in $(seq "$ROUNDS"); do
	echo "## round $r"
	# ip netns exec execs simdedge: the PIDs are the servers'.
	run "simdedge h3 xdp" "$PID_xdp" https://$SIP:$P_XDP/
	run "simdedge h3 udp" "$PID_udp" https://$SIP:$P_UDP/
done | tee "$W/rounds.txt"
echo "## per-round ratio xdp/udp (CPU per request), median"
awk '/^## round/ {r++} /us CPU\/req/ { v[r, $3] = $(NF-2) }
	END { for (i = 1; i <= r; i++) print v[i, "xdp"] / v[i, "udp"] }' "$W/rounds.txt" |
	sort -n | awk '{v[NR] = $1} END { printf "%.2f (min %.2f, max %.2f)\n", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2, v[1], v[NR] }'

[ -n "${PROFILE:-}" ] || exit 0
mkdir -p "$PROFILE"
cp "$W/simdedge" "$PROFILE/simdedge.bin"
for s in xdp:$P_XDP:9645 udp:$P_UDP:9646; do
	IFS=: read -r name port admin <<<"$s"
	# The load runs 10 s; the profile covers 8 s of it, from 1 s in.
	load -url "https://$SIP:$port/" -conns "$CONNS" -streams "$STREAMS" -d 10s >"$PROFILE/$name.load" &
	lp=$!
	sleep 1
	ip netns exec "${NS}s" curl -s -o "$PROFILE/$name.pprof" "http://127.0.0.1:$admin/debug/pprof/profile?seconds=8"
	wait "$lp"
done
echo "profiles in $PROFILE (go tool pprof $PROFILE/simdedge.bin $PROFILE/xdp.pprof); requests over 10 s in $PROFILE/*.load"
