#!/usr/bin/env bash
# HTTP/3 CPU per request: simdedge's HTTP/3 (quic-go's QUIC layer, the
# project's framing and request mapping) against Caddy's HTTP/3 (Debian's
# caddy, also on quic-go) and against simdedge's own HTTP/2 over TLS on the
# same listener, all answering "ok\n" with one ECDSA P-256 certificate.
#
# Servers run on CPU 0 (taskset -c 0), the load generator (bench/cmd/h3load:
# quic-go's client for HTTP/3, net/http's for HTTP/2) on CPU 1 with CONNS
# connections of STREAMS requests in flight each. Rounds are interleaved;
# each is DURATION long. Server CPU is utime+stime from /proc/PID/stat over
# the run, divided by the requests the generator counted. Only the
# processes this script starts are stopped, by PID.
#
# Usage: bench/h3/run.sh [ROUNDS] [DURATION]   (needs caddy, openssl)
set -euo pipefail
ROUNDS=${1:-5}
DURATION=${2:-5s}
CONNS=${CONNS:-1}
STREAMS=${STREAMS:-8}
cd "$(dirname "$0")/../.."   # repository root
W=$(mktemp -d /tmp/simdedge-h3.XXXXXX)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT
export PATH="$PATH:/usr/local/go/bin"
go build -o "$W/simdedge" ./cmd/simdedge
(cd bench && go build -o "$W/h3load" ./cmd/h3load)

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
	-subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1 \
	-keyout "$W/key.pem" -out "$W/cert.pem" 2>/dev/null

P_SD=19643 P_CADDY=19644
cat >"$W/sd.yaml" <<YAML
engine: ${ENGINE:-loop}
listeners:
  - address: "127.0.0.1:$P_SD"
    tls: {certificates: [{cert: "$W/cert.pem", key: "$W/key.pem"}], min_version: "1.3"}
    http3: true
routes:
  - match: {path_prefix: /}
    respond: {status: 200, body: "ok\n", headers: {Content-Type: text/plain}}
YAML
# Caddy as a peer measured like simdedge: no admin endpoint, no access
# log, no automatic HTTPS (the run's own certificate), h1 h2 h3.
cat >"$W/Caddyfile" <<CADDY
{
	admin off
	auto_https off
	servers {
		protocols h1 h2 h3
	}
}
https://127.0.0.1:$P_CADDY {
	tls $W/cert.pem $W/key.pem
	header Content-Type text/plain
	respond "ok
" 200
}
CADDY
. bench/load/lib.sh
start simdedge 0 "$W/simdedge" serve -config "$W/sd.yaml"
start caddy 0 env HOME="$W" XDG_DATA_HOME="$W" XDG_CONFIG_HOME="$W" caddy run --adapter caddyfile --config "$W/Caddyfile"
sleep 2
for u in https://127.0.0.1:$P_SD/ https://127.0.0.1:$P_CADDY/; do
	"$W/h3load" -url "$u" -d 200ms >/dev/null || { echo "server at $u not answering over HTTP/3"; cat "$W"/*.out; exit 1; }
done

run() { # name pid url [-h2]
	local t0 t1 out reqs errs secs
	t0=$(ticks "$2")
	out=$(taskset -c 1 "$W/h3load" -url "$3" -conns "$CONNS" -streams "$STREAMS" -d "$DURATION" ${4:-})
	t1=$(ticks "$2")
	reqs=$(echo "$out" | awk '/^requests/ {print $2}')
	errs=$(echo "$out" | awk '/^errors/ {print $2}')
	secs=$(echo "$out" | awk '/^seconds/ {print $2}')
	[ "$errs" = 0 ] || echo "$1: $errs errors" >&2
	awk -v n="$1" -v q="$reqs" -v s="$secs" -v t=$((t1 - t0)) -v hz="$HZ" \
		'BEGIN { printf "%-24s %9.0f req/s  %7.2f us CPU/req\n", n, q / s, t * 1e6 / hz / q }'
}
echo "# $(date -u +%FT%TZ) rounds=$ROUNDS duration=$DURATION conns=$CONNS streams=$STREAMS; $(nproc) CPUs, shared machine; $(go version | cut -d' ' -f3); caddy $(caddy version | cut -d' ' -f1)"
NAMES=("simdedge HTTP/3" "caddy HTTP/3" "simdedge HTTP/2 TLS")
for r in $(seq "$ROUNDS"); do
	echo "## round $r"
	run "${NAMES[0]}" "$PID_simdedge" https://127.0.0.1:$P_SD/
	run "${NAMES[1]}" "$PID_caddy" https://127.0.0.1:$P_CADDY/
	run "${NAMES[2]}" "$PID_simdedge" https://127.0.0.1:$P_SD/ -h2
done | tee "$W/rounds.txt"
echo "## medians over $ROUNDS rounds"
for n in "${NAMES[@]}"; do
	grep -F "$n " "$W/rounds.txt" | awk '{print $(NF-2)}' | sort -n |
		awk -v n="$n" '{v[NR] = $1} END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
			printf "%-24s %7.2f us CPU/req (min %.2f, max %.2f)\n", n, m, v[1], v[NR] }'
done
# Ratios taken in the same round, then their median.
median() { sort -n | awk '{v[NR] = $1} END { printf "%.2f (min %.2f, max %.2f)", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2, v[1], v[NR] }'; }
ratios() { # column: 1 for h3/caddy, 2 for h3/h2
	awk '/^## round/ {r++} /us CPU\/req/ { v[r, $1 " " $2] = $(NF-2) }
		END { for (i = 1; i <= r; i++) print v[i, "simdedge HTTP/3"] / v[i, "caddy HTTP/3"], v[i, "simdedge HTTP/3"] / v[i, "simdedge HTTP/2"] }' "$W/rounds.txt" |
		awk -v c="$1" '{print $c}' | median
}
echo "## per-round ratios, median"
echo "simdedge HTTP/3 / caddy HTTP/3:         $(ratios 1)"
echo "simdedge HTTP/3 / simdedge HTTP/2 TLS:  $(ratios 2)"
