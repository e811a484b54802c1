#!/usr/bin/env bash
# Issue 32's cost of a global rate limit: simdedge (built with -tags fleet)
# proxying to an nginx backend through a route without a limit and through
# one whose rate_limit.service asks Envoy's reference rate-limit service
# (service_cmd, from make deps) backed by Redis, with a limit too high to
# refuse anything, so both routes do the same work but the call. simdedge
# on CPU 0; wrk, the backend, the service and Redis on CPU 1. Reports
# throughput, wrk's latency (mean and p99) and CPU time per request of
# simdedge, and of the service plus Redis, from /proc; rounds interleaved.
#
# Usage: bench/load/globalrl.sh [ROUNDS] [DURATION] [ENGINE]
#        (needs wrk, nginx-light, redis-server and service_cmd)
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${1:-5} DURATION=${2:-5s} ENGINE=${3:-loop} CONNS=${CONNS:-16}
W=$(mktemp -d /tmp/simdedge-globalrl.XXXXXX)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$W"; }
trap cleanup EXIT
export PATH="$PATH:/usr/local/go/bin:$(go env GOPATH)/bin"
go build -tags fleet -o "$W/simdedge" ./cmd/simdedge

# Ports (127.0.0.1), apart from the other scripts'.
P_BACKEND=19280 P_PLAIN=19281 P_LIMITED=19282 P_REDIS=19283 P_GRPC=19284 P_HTTP=19285 P_DEBUG=19286
mkdir -p "$W/rt/ratelimit/config"
cat > "$W/rt/ratelimit/config/edge.yaml" <<YAML
domain: edge
descriptors:
  - key: remote_address
    rate_limit: {unit: second, requests_per_unit: 1000000000}
YAML
for p in plain limited; do
	port=$P_PLAIN
	limit=""
	if [ $p = limited ]; then
		port=$P_LIMITED
		limit="    rate_limit: {service: {address: \"127.0.0.1:$P_GRPC\", domain: edge, timeout: 1s, failure_mode: deny, descriptors: [{entries: [{key: remote_address, value: \"{client_ip}\"}]}]}}"
	fi
	cat > "$W/$p.yaml" <<YAML
listen: "127.0.0.1:$port"
engine: $ENGINE
upstreams: [{name: backend, targets: ["127.0.0.1:$P_BACKEND"]}]
routes:
  - match: {path_prefix: /api/}
$limit
    proxy: {upstream: backend}
YAML
done
. bench/load/lib.sh
nginx_conf nginx "listen 127.0.0.1:$P_BACKEND; $NGINX_OK"
start backend 1 nginx -p "$W/nginx" -c "$W/nginx/nginx.conf"
start redis 1 redis-server --port $P_REDIS --bind 127.0.0.1 --save "" --appendonly no
sleep 0.5
USE_STATSD=false LOG_LEVEL=warn BACKEND_TYPE=redis REDIS_SOCKET_TYPE=tcp REDIS_URL=127.0.0.1:$P_REDIS \
	RUNTIME_ROOT="$W/rt" RUNTIME_SUBDIRECTORY=ratelimit RUNTIME_WATCH_ROOT=false RUNTIME_IGNOREDOTFILES=true \
	HOST=127.0.0.1 GRPC_HOST=127.0.0.1 DEBUG_HOST=127.0.0.1 PORT=$P_HTTP GRPC_PORT=$P_GRPC DEBUG_PORT=$P_DEBUG \
	start service 1 service_cmd
start plain 0 "$W/simdedge" serve -config "$W/plain.yaml"
start limited 0 "$W/simdedge" serve -config "$W/limited.yaml"
URL=/api/v1/users
for p in $P_PLAIN $P_LIMITED; do # up to 20 s each for a loaded machine
	for i in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$p$URL" && break; sleep 0.2; done
	curl -sf -o /dev/null "http://127.0.0.1:$p$URL" || { echo "server on $p not answering"; cat "$W"/*.out; exit 1; }
done

run() { # name pid port
	local t0 t1 s0 s1 out reqs rps
	t0=$(ticks "$2")
	s0=$(( $(ticks "$PID_service") + $(ticks "$PID_redis") ))
	out=$(taskset -c 1 wrk -t1 -c"$CONNS" -d"$DURATION" --latency "http://127.0.0.1:$3$URL")
	t1=$(ticks "$2")
	s1=$(( $(ticks "$PID_service") + $(ticks "$PID_redis") ))
	reqs=$(echo "$out" | awk '/requests in/ {print $1}')
	rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
	lat=$(echo "$out" | awk '/^    Latency/ {print $2}')
	p99=$(echo "$out" | awk '/^ +99%/ {print $2}')
	if echo "$out" | grep -q "Non-2xx"; then echo "$1: non-2xx responses!" >&2; fi
	awk -v n="$1" -v r="$rps" -v q="$reqs" -v t=$((t1 - t0)) -v s=$((s1 - s0)) -v hz="$HZ" -v l="$lat" -v p="$p99" \
		'BEGIN { printf "%-8s %8.0f req/s  latency %8s p99 %8s  %7.2f us simdedge CPU/req  %7.2f us service+redis CPU/req\n", n, r, l, p, t * 1e6 / hz / q, s * 1e6 / hz / q }'
}
echo "# $(date -u +%FT%TZ) $(git rev-parse --short HEAD) engine=$ENGINE rounds=$ROUNDS duration=$DURATION conns=$CONNS; $(nproc) CPUs, shared machine"
for r in $(seq "$ROUNDS"); do
	echo "## round $r"
	run plain "$PID_plain" $P_PLAIN
	run limited "$PID_limited" $P_LIMITED
done
