#!/usr/bin/env bash
# A/B of CPU time per request between this tree and an older simdedge
# binary, on the plain paths whose cost a change must not raise: an origin
# (keep-alive GET to a respond route) and a proxy (a path_prefix route to
# an nginx `return 200` backend with upstream keep-alive), each on the
# loop engine (proxy on the loop) and the goroutine engine. Eight servers
# (2 builds x 2 paths x 2 engines) run at once on CPU 0; wrk and nginx run
# on CPU 1. Rounds are interleaved: each round runs wrk against every
# server once, in an order that rotates by round. Server CPU time comes
# from /proc/PID/stat (utime+stime). Only what this script starts is
# stopped, by PID.
#
# It writes OUT/old.txt and OUT/new.txt in Go benchmark format (unit
# us-cpu/req), for `go tool benchstat old=OUT/old.txt new=OUT/new.txt`
# (run from bench/, whose go.mod has the tool).
#
# Usage: SIMDEDGE_BASE=/path/to/old/simdedge bench/load/ab.sh [ROUNDS] [DURATION] [OUT]
#        (needs wrk and nginx-light)
set -euo pipefail
ROUNDS=${1:-10} DURATION=${2:-5s} OUT=${3:-$(mktemp -d /tmp/simdedge-ab-out.XXXXXX)}
CONNS=${CONNS:-64}
: "${SIMDEDGE_BASE:?set SIMDEDGE_BASE to the older simdedge binary}"
cd "$(dirname "$0")/../.."
W=$(mktemp -d /tmp/simdedge-ab.XXXXXX)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT
export PATH="$PATH:/usr/local/go/bin"
go build -o "$W/simdedge" ./cmd/simdedge
mkdir -p "$OUT"
: >"$OUT/old.txt"
: >"$OUT/new.txt"

# Ports (127.0.0.1), apart from run.sh's and rewrite.sh's.
P_BACKEND=19280
. bench/load/lib.sh
nginx_conf nginx "listen 127.0.0.1:$P_BACKEND; $NGINX_OK"
start backend 1 nginx -p "$W/nginx" -c "$W/nginx/nginx.conf"

# name -> port, build, path, engine
NAMES=()
port=19281
for build in old new; do
	bin="$W/simdedge"
	[ "$build" = old ] && bin="$SIMDEDGE_BASE"
	for path in origin proxy; do
		for engine in loop goroutine; do
			name="${build}_${path}_${engine}"
			if [ "$path" = origin ]; then
				action='respond: {status: 200, body: "ok\n", headers: {Content-Type: text/plain}}'
				prefix=/healthz
			else
				action='proxy: {upstream: backend}'
				prefix=/api/
			fi
			cat >"$W/$name.yaml" <<YAML
listen: "127.0.0.1:$port"
engine: $engine
upstreams: [{name: backend, targets: ["127.0.0.1:$P_BACKEND"]}]
routes:
  - match: {path_prefix: $prefix}
    $action
YAML
			start "$name" 0 "$bin" serve -config "$W/$name.yaml"
			eval "PORT_$name=$port"
			eval "PREFIX_$name=$prefix"
			NAMES+=("$name")
			port=$((port + 1))
		done
	done
done
sleep 1
for n in "${NAMES[@]}"; do
	p=$(eval echo "\$PORT_$n") pre=$(eval echo "\$PREFIX_$n")
	curl -sf -o /dev/null "http://127.0.0.1:$p${pre}x" || { echo "$n on $p not answering" >&2; exit 1; }
done

echo "# $(date -u +%FT%TZ) $(git rev-parse --short HEAD) vs $SIMDEDGE_BASE; rounds=$ROUNDS duration=$DURATION conns=$CONNS; $(nproc) CPUs; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
for r in $(seq "$ROUNDS"); do
	echo "## round $r"
	k=${#NAMES[@]}
	for i in $(seq 0 $((k - 1))); do
		n=${NAMES[$(((i + r) % k))]}
		pid=$(eval echo "\$PID_$n") p=$(eval echo "\$PORT_$n") pre=$(eval echo "\$PREFIX_$n")
		t0=$(ticks "$pid")
		out=$(taskset -c 1 wrk -t1 -c"$CONNS" -d"$DURATION" "http://127.0.0.1:$p${pre}x")
		t1=$(ticks "$pid")
		reqs=$(echo "$out" | awk '/requests in/ {print $1}')
		if echo "$out" | grep -q "Non-2xx"; then echo "$n: non-2xx responses!" >&2; exit 1; fi
		cpu=$(awk -v t=$((t1 - t0)) -v hz="$HZ" -v q="$reqs" 'BEGIN { printf "%.3f", t * 1e6 / hz / q }')
		build=${n%%_*} rest=${n#*_}
		path=${rest%%_*} engine=${rest#*_}
		printf "%-22s %10s req  %7s us CPU/req\n" "$n" "$reqs" "$cpu"
		echo "BenchmarkCPUPerRequest/path=$path/engine=$engine 1 $cpu us-cpu/req" >>"$OUT/$build.txt"
	done
done
echo "# results in $OUT (old.txt, new.txt)"
