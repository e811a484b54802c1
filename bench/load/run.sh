#!/usr/bin/env bash
# Load comparison of simdedge against net/http, fasthttp and nginx as an
# origin (keep-alive GET /healthz), and against httputil.ReverseProxy and
# nginx proxy_pass as a proxy in front of an nginx `return 200` backend.
#
# Servers run on CPU 0 (taskset -c 0), wrk on CPU 1; the proxy backend also
# runs on CPU 1, the same for every proxy. Rounds are interleaved; each is
# DURATION long. Server CPU time comes from /proc/PID/stat (utime+stime).
# Only the processes this script starts are stopped, by PID.
#
# Usage: bench/load/run.sh [ROUNDS] [DURATION]   (needs wrk and nginx-light)
set -euo pipefail
ROUNDS=${1:-3}
DURATION=${2:-10s}
CONNS=${CONNS:-50}
cd "$(dirname "$0")/../.."   # repository root
W=$(mktemp -d /tmp/simdedge-load.XXXXXX)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT

export PATH="$PATH:/usr/local/go/bin"
go build -o "$W/simdedge" ./cmd/simdedge
(cd bench && go build -o "$W/peers" ./load/peers)

# Ports (127.0.0.1).
P_SIMDEDGE=19080 P_NETHTTP=19081 P_FASTHTTP=19082 P_NGINX=19083
P_BACKEND=19090 P_SD_PROXY=19091 P_NGINX_PROXY=19092 P_REVPROXY=19093

cat > "$W/origin.yaml" <<YAML
listen: "127.0.0.1:$P_SIMDEDGE"
routes:
  - match: {path_prefix: /healthz}
    respond: {status: 200, body: "ok\n", headers: {Content-Type: text/plain}}
YAML
cat > "$W/proxy.yaml" <<YAML
listen: "127.0.0.1:$P_SD_PROXY"
upstreams:
  - name: backend
    targets: ["127.0.0.1:$P_BACKEND"]
routes:
  - match: {path_prefix: /}
    proxy: {upstream: backend}
YAML

. bench/load/lib.sh
nginx_conf nginx-origin "listen 127.0.0.1:$P_NGINX; $NGINX_OK"
nginx_conf nginx-backend "listen 127.0.0.1:$P_BACKEND; $NGINX_OK"
nginx_conf nginx-proxy "listen 127.0.0.1:$P_NGINX_PROXY; location / { proxy_pass http://backend; proxy_http_version 1.1; proxy_set_header Connection \"\"; }" \
	"upstream backend { server 127.0.0.1:$P_BACKEND; keepalive 128; }"

start backend 1 nginx -p "$W/nginx-backend" -c "$W/nginx-backend/nginx.conf"
start simdedge 0 "$W/simdedge" serve -config "$W/origin.yaml"
start nethttp 0 "$W/peers" -kind nethttp -listen 127.0.0.1:$P_NETHTTP
start fasthttp 0 "$W/peers" -kind fasthttp -listen 127.0.0.1:$P_FASTHTTP
start nginx 0 nginx -p "$W/nginx-origin" -c "$W/nginx-origin/nginx.conf"
start sdproxy 0 "$W/simdedge" serve -config "$W/proxy.yaml"
start nginxproxy 0 nginx -p "$W/nginx-proxy" -c "$W/nginx-proxy/nginx.conf"
start revproxy 0 "$W/peers" -kind revproxy -listen 127.0.0.1:$P_REVPROXY -upstream 127.0.0.1:$P_BACKEND
sleep 1
for p in $P_SIMDEDGE $P_NETHTTP $P_FASTHTTP $P_NGINX $P_SD_PROXY $P_NGINX_PROXY $P_REVPROXY; do
	curl -sf -o /dev/null "http://127.0.0.1:$p/healthz" || { echo "server on $p not answering"; exit 1; }
done

run() { # name pid port
	local t0 t1 out reqs rps
	t0=$(ticks "$2")
	out=$(taskset -c 1 wrk -t1 -c"$CONNS" -d"$DURATION" "http://127.0.0.1:$3/healthz")
	t1=$(ticks "$2")
	reqs=$(echo "$out" | awk '/requests in/ {print $1}')
	rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
	if echo "$out" | grep -q "Non-2xx"; then echo "$1: non-2xx responses!" >&2; fi
	# CPU µs per request = ticks * 1e6 / HZ / requests
	awk -v n="$1" -v r="$rps" -v q="$reqs" -v t=$((t1 - t0)) -v hz="$HZ" \
		'BEGIN { printf "%-11s %10.0f req/s  %7.2f us CPU/req\n", n, r, t * 1e6 / hz / q }'
}
echo "# $(date -u +%FT%TZ) rounds=$ROUNDS duration=$DURATION conns=$CONNS; $(nproc) CPUs, shared machine"
for r in $(seq "$ROUNDS"); do
	echo "## round $r: origin"
	run simdedge "$PID_simdedge" $P_SIMDEDGE
	run nethttp "$PID_nethttp" $P_NETHTTP
	run fasthttp "$PID_fasthttp" $P_FASTHTTP
	run nginx "$PID_nginx" $P_NGINX
	echo "## round $r: proxy (backend nginx on CPU 1)"
	run sdproxy "$PID_sdproxy" $P_SD_PROXY
	run revproxy "$PID_revproxy" $P_REVPROXY
	run nginxproxy "$PID_nginxproxy" $P_NGINX_PROXY
done
