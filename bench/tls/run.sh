#!/usr/bin/env bash
# HTTPS keep-alive CPU per request: TLS driven by the event loop (design A,
# the default of `engine: loop`) against TLS connections handed to
# goroutines (design B: the same binary with SIMDEDGE_LOOP_TLS=off), the
# goroutine engine, plain HTTP on the loop, and nginx (ssl module) as a
# reference, all with one ECDSA P-256 certificate and TLS 1.3.
#
# Servers run on CPU 0 (taskset -c 0), wrk on CPU 1 with CONNS connections
# (default 1: the cost of one request, not of concurrency). Rounds are
# interleaved; each is DURATION long. Server CPU is utime+stime from
# /proc/PID/stat over the run, divided by the requests wrk counted. Only
# the processes this script starts are stopped, by PID.
#
# Usage: bench/tls/run.sh [ROUNDS] [DURATION]   (needs wrk, openssl, nginx-light)
set -euo pipefail
ROUNDS=${1:-5}
DURATION=${2:-5s}
CONNS=${CONNS:-1}
cd "$(dirname "$0")/../.."   # repository root
W=$(mktemp -d /tmp/simdedge-tls.XXXXXX)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT
export PATH="$PATH:/usr/local/go/bin"
go build -o "$W/simdedge" ./cmd/simdedge

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
	-subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1 \
	-keyout "$W/key.pem" -out "$W/cert.pem" 2>/dev/null

P_A=19443 P_B=19444 P_G=19445 P_PLAIN=19446 P_NGINX=19447
sd_conf() { # file port engine tls(0/1)
	{
		echo "engine: $3"
		echo "listeners:"
		echo "  - address: \"127.0.0.1:$2\""
		if [ "$4" = 1 ]; then
			echo "    tls: {certificates: [{cert: \"$W/cert.pem\", key: \"$W/key.pem\"}], min_version: \"1.3\"}"
		fi
		echo "routes:"
		echo "  - match: {path_prefix: /healthz}"
		echo "    respond: {status: 200, body: \"ok\\n\", headers: {Content-Type: text/plain}}"
	} >"$1"
}
sd_conf "$W/a.yaml" $P_A loop 1
sd_conf "$W/b.yaml" $P_B loop 1
sd_conf "$W/g.yaml" $P_G goroutine 1
sd_conf "$W/plain.yaml" $P_PLAIN loop 0
. bench/load/lib.sh
nginx_conf nginx "listen 127.0.0.1:$P_NGINX ssl; ssl_certificate $W/cert.pem; ssl_certificate_key $W/key.pem; ssl_protocols TLSv1.3; $NGINX_OK"
start loopA 0 "$W/simdedge" serve -config "$W/a.yaml"
start loopB 0 env SIMDEDGE_LOOP_TLS=off "$W/simdedge" serve -config "$W/b.yaml"
start goroutine 0 "$W/simdedge" serve -config "$W/g.yaml"
start plain 0 "$W/simdedge" serve -config "$W/plain.yaml"
start nginx 0 nginx -p "$W/nginx" -c "$W/nginx/nginx.conf"
sleep 1
for u in https://127.0.0.1:$P_A https://127.0.0.1:$P_B https://127.0.0.1:$P_G http://127.0.0.1:$P_PLAIN https://127.0.0.1:$P_NGINX; do
	curl -sfk --tlsv1.3 -o /dev/null "$u/healthz" || { echo "server at $u not answering"; exit 1; }
done

run() { # name pid url
	local t0 t1 out reqs rps
	t0=$(ticks "$2")
	out=$(taskset -c 1 wrk -t1 -c"$CONNS" -d"$DURATION" "$3/healthz")
	t1=$(ticks "$2")
	reqs=$(echo "$out" | awk '/requests in/ {print $1}')
	rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
	if echo "$out" | grep -q "Non-2xx\|errors"; then echo "$1: errors: $(echo "$out" | grep -i 'non-2xx\|errors')" >&2; fi
	awk -v n="$1" -v r="$rps" -v q="$reqs" -v t=$((t1 - t0)) -v hz="$HZ" \
		'BEGIN { printf "%-22s %9.0f req/s  %7.2f us CPU/req\n", n, r, t * 1e6 / hz / q }'
}
echo "# $(date -u +%FT%TZ) rounds=$ROUNDS duration=$DURATION conns=$CONNS; $(nproc) CPUs, shared machine; $(go version | cut -d' ' -f3)"
NAMES=("A loop-driven TLS" "B loop, TLS on gorout." "goroutine engine TLS" "plain HTTP, loop" "nginx TLS")
for r in $(seq "$ROUNDS"); do
	echo "## round $r"
	run "${NAMES[0]}" "$PID_loopA" https://127.0.0.1:$P_A
	run "${NAMES[1]}" "$PID_loopB" https://127.0.0.1:$P_B
	run "${NAMES[2]}" "$PID_goroutine" https://127.0.0.1:$P_G
	run "${NAMES[3]}" "$PID_plain" http://127.0.0.1:$P_PLAIN
	run "${NAMES[4]}" "$PID_nginx" https://127.0.0.1:$P_NGINX
done | tee "$W/rounds.txt"
echo "## medians over $ROUNDS rounds"
for n in "${NAMES[@]}"; do
	grep -F "$n " "$W/rounds.txt" | awk '{print $(NF-2)}' | sort -n |
		awk -v n="$n" '{v[NR] = $1} END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
			printf "%-22s %7.2f us CPU/req (min %.2f, max %.2f)\n", n, m, v[1], v[NR] }'
done
