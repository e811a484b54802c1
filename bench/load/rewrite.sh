#!/usr/bin/env bash
# Issue 23's speed case: simdedge proxying to an nginx backend through a
# plain route and through a route with a regex match, a strip_prefix and
# header rewrites (a request field set from {client_ip}, one removed, the
# backend's Server removed from the response). Proxies on CPU 0 (event
# loop, proxy on the loop: the defaults), wrk and the backend on CPU 1;
# reports the proxy's CPU time per request from /proc, rounds interleaved.
# With SIMDEDGE_BASE=/path/to/older/simdedge it also runs that binary on
# the plain route (the "no policy keeps today's cost" comparison).
#
# Usage: bench/load/rewrite.sh [ROUNDS] [DURATION]   (needs wrk and nginx-light)
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${1:-10} DURATION=${2:-5s} CONNS=${CONNS:-64}
W=$(mktemp -d /tmp/simdedge-rewrite.XXXXXX)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT
export PATH="$PATH:/usr/local/go/bin"
go build -o "$W/simdedge" ./cmd/simdedge

# Ports (127.0.0.1), apart from run.sh's.
P_BACKEND=19180 P_PLAIN=19181 P_POLICY=19182 P_BASE=19183
upstream="upstreams: [{name: backend, targets: [\"127.0.0.1:$P_BACKEND\"]}]"
cat > "$W/plain.yaml" <<YAML
listen: "127.0.0.1:$P_PLAIN"
$upstream
routes:
  - match: {path_prefix: /api/}
    proxy: {upstream: backend}
YAML
sed "s/$P_PLAIN/$P_BASE/" "$W/plain.yaml" > "$W/base.yaml"
cat > "$W/policy.yaml" <<YAML
listen: "127.0.0.1:$P_POLICY"
$upstream
routes:
  - match: {path_regex: "^/api/v[0-9]+/"}
    rewrite: {strip_prefix: /api}
    request_headers: {set: {X-Client: "{client_ip}"}, remove: [X-Debug]}
    response_headers: {remove: [Server]}
    proxy: {upstream: backend}
YAML
. bench/load/lib.sh
nginx_conf nginx "listen 127.0.0.1:$P_BACKEND; $NGINX_OK"
start backend 1 nginx -p "$W/nginx" -c "$W/nginx/nginx.conf"
start plain 0 "$W/simdedge" serve -config "$W/plain.yaml"
start policy 0 "$W/simdedge" serve -config "$W/policy.yaml"
PORTS="$P_PLAIN $P_POLICY"
if [ -n "${SIMDEDGE_BASE:-}" ]; then
	start base 0 "$SIMDEDGE_BASE" serve -config "$W/base.yaml"
	PORTS="$PORTS $P_BASE"
fi
sleep 1
URL=/api/v1/users?id=7
for p in $PORTS; do
	curl -sf -o /dev/null -H "X-Tenant: blue" "http://127.0.0.1:$p$URL" || { echo "server on $p not answering"; exit 1; }
done
curl -sfi "http://127.0.0.1:$P_POLICY$URL" | grep -qi '^server:' && { echo "policy route kept Server"; exit 1; }

run() { # name pid port
	local t0 t1 out reqs rps
	t0=$(ticks "$2")
	out=$(taskset -c 1 wrk -t1 -c"$CONNS" -d"$DURATION" -H "X-Tenant: blue" -H "X-Debug: 1" "http://127.0.0.1:$3$URL")
	t1=$(ticks "$2")
	reqs=$(echo "$out" | awk '/requests in/ {print $1}')
	rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
	if echo "$out" | grep -q "Non-2xx"; then echo "$1: non-2xx responses!" >&2; fi
	awk -v n="$1" -v r="$rps" -v q="$reqs" -v t=$((t1 - t0)) -v hz="$HZ" \
		'BEGIN { printf "%-7s %10.0f req/s  %7.2f us CPU/req\n", n, r, t * 1e6 / hz / q }'
}
echo "# $(date -u +%FT%TZ) $(git rev-parse --short HEAD) rounds=$ROUNDS duration=$DURATION conns=$CONNS; $(nproc) CPUs, shared machine"
for r in $(seq "$ROUNDS"); do
	echo "## round $r"
	run plain "$PID_plain" $P_PLAIN
	run policy "$PID_policy" $P_POLICY
	if [ -n "${SIMDEDGE_BASE:-}" ]; then run base "$PID_base" $P_BASE; fi
done
