#!/usr/bin/env bash
# Memory per idle keep-alive connection: each server, in a fresh process,
# answers one warm-up request; its memory is read; then bench/cmd/idleconns
# opens N connections with one request each and holds them open and
# silent; the memory is read again after SETTLE. Per idle connection is the
# difference over N, as VmRSS (/proc/PID/status) and Pss
# (/proc/PID/smaps_rollup). Servers: simdedge on the loop engine and on the
# goroutine engine, and nginx (nginx-light, one worker), over plain
# HTTP/1.1, and unless TLS_N is 0 also over HTTP/1.1 and HTTP/2 over TLS
# (TLS 1.3, ECDSA P-256). For simdedge the live heap per connection (after
# a collection, from pprof on its admin listener) is printed too. Servers
# run on CPU 0, the client on CPU 1; loopback only.
# Only the processes this script starts are stopped, by PID.
#
# Usage: bench/load/idle.sh [N] [TLS_N]   (N plain connections, default 5000;
#        TLS_N TLS connections, default 2000, 0 to skip; needs nginx-light,
#        openssl for TLS). SETTLE (seconds, default 2) is the wait before
#        each reading; ONLY="loop_h1 nginx_h1 ..." runs only those rows.
set -euo pipefail
N=${1:-5000} TLS_N=${2:-2000}
SETTLE=${SETTLE:-2}
cd "$(dirname "$0")/../.."
W=$(mktemp -d /tmp/simdedge-idle.XXXXXX)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT
export PATH="$PATH:/usr/local/go/bin"
go build -o "$W/simdedge" ./cmd/simdedge
(cd bench && go build -o "$W/idleconns" ./cmd/idleconns)
. bench/load/lib.sh
# Descriptors for N connections (the servers inherit the limit; Go
# raises its soft limit to the hard one by itself, nginx needs it said).
ulimit -n "$(ulimit -Hn)"
MAXC=$(( (N > TLS_N ? N : TLS_N) + 256 ))

if [ "$TLS_N" -gt 0 ]; then
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
		-subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1 \
		-keyout "$W/key.pem" -out "$W/cert.pem" 2>/dev/null
fi

PORT=19380
sd_conf() { # file port engine tls(0/1)
	{
		echo "engine: $3"
		echo "limits: {max_conns: $MAXC, max_conns_per_ip: $MAXC}"
		echo "timeouts: {idle: 10m}"
		echo "admin: {address: \"127.0.0.1:$(($2 + 1000))\", pprof: true}"
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

rss() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }
# heap PORT: simdedge's live heap in KB right after two collections
# (pprof's heap?gc=1 on the admin listener at PORT+1000; the second, since
# what sync.Pools hold outlives one).
heap() {
	curl -sf -o /dev/null "http://127.0.0.1:$(($1 + 1000))/debug/pprof/heap?gc=1"
	curl -sf "http://127.0.0.1:$(($1 + 1000))/debug/pprof/heap?debug=1&gc=1" | awk '/^# HeapAlloc = / {print int($4 / 1024)}'
}
pss() { awk '/^Pss:/ {print $2}' "/proc/$1/smaps_rollup"; }

# measure NAME KIND(sd-loop|sd-goroutine|nginx) MODE(h1|tls|h2) COUNT
measure() {
	if [ -n "${ONLY:-}" ] && ! [[ " $ONLY " == *" $1 "* ]]; then return 0; fi
	local name=$1 kind=$2 mode=$3 n=$4 port=$((PORT++)) pid tlsflag=0 scheme=http
	local cflags=()
	case $mode in
	tls) tlsflag=1 scheme=https cflags=(-tls) ;;
	h2) tlsflag=1 scheme=https cflags=(-tls -h2) ;;
	esac
	case $kind in
	sd-*)
		sd_conf "$W/$name.yaml" "$port" "${kind#sd-}" "$tlsflag"
		start "$name" 0 "$W/simdedge" serve -config "$W/$name.yaml"
		;;
	nginx)
		local l="listen 127.0.0.1:$port"
		[ "$mode" = tls ] && l="$l ssl"
		[ "$mode" = h2 ] && l="$l ssl http2"
		[ "$tlsflag" = 1 ] && l="$l; ssl_certificate $W/cert.pem; ssl_certificate_key $W/key.pem; ssl_protocols TLSv1.3"
		nginx_conf "$name" "$l; keepalive_timeout 10m; $NGINX_OK"
		sed -i "s/worker_connections [0-9]*;/worker_connections $MAXC;/; s/^worker_processes 1;/worker_processes 1;\nworker_rlimit_nofile $((MAXC + 64));/" "$W/$name/nginx.conf"
		start "$name" 0 nginx -p "$W/$name" -c "$W/$name/nginx.conf"
		;;
	esac
	pid=$(eval echo "\$PID_$name")
	for _ in $(seq 50); do
		curl -sfk -o /dev/null "$scheme://127.0.0.1:$port/healthz" && break
		sleep 0.1
	done
	# The warm-up: one connection served, so that what every server
	# allocates once (TLS state, pools) is in "before".
	taskset -c 1 "$W/idleconns" -addr "127.0.0.1:$port" -n 1 "${cflags[@]}" </dev/null >/dev/null
	sleep "$SETTLE"
	local r0 p0 r1 p1 h0=0 h1=0
	# The live heap before RSS, and a settle between: writing the
	# profile allocates a few MB, which would otherwise be in the heap
	# (and RSS) that the connections then grow into, and be counted as
	# theirs.
	if [ "${kind%%-*}" = sd ]; then
		h0=$(heap "$port")
		sleep "$SETTLE"
	fi
	r0=$(rss "$pid") p0=$(pss "$pid")
	# The client holds its connections until its stdin (a FIFO) closes.
	mkfifo "$W/$name.fifo"
	taskset -c 1 "$W/idleconns" -addr "127.0.0.1:$port" -n "$n" "${cflags[@]}" <"$W/$name.fifo" >"$W/$name.client" &
	local cpid=$!
	PIDS+=("$cpid")
	exec 9>"$W/$name.fifo"
	for _ in $(seq 600); do
		grep -q ready "$W/$name.client" 2>/dev/null && break
		kill -0 "$cpid" 2>/dev/null || break
		sleep 0.1
	done
	if ! grep -q "ready $n" "$W/$name.client"; then
		echo "$name: the client did not get $n connections" >&2
		exec 9>&-
		return 1
	fi
	sleep "$SETTLE"
	r1=$(rss "$pid") p1=$(pss "$pid")
	# An idle Go process collects only every two minutes: what the
	# connections leave as garbage (buffers, stacks of ended goroutines)
	# stays in RSS until then. The second reading follows one collection
	# (heap, which also gives the live heap) and the runtime's return of
	# free pages; nginx frees as it goes, and is read again the same.
	local r2=$r1
	[ "${kind%%-*}" = sd ] && h1=$(heap "$port")
	sleep "$SETTLE"
	r2=$(rss "$pid")
	exec 9>&-
	wait "$cpid" || true
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	awk -v n="$name" -v c="$n" -v r0="$r0" -v r1="$r1" -v r2="$r2" -v p0="$p0" -v p1="$p1" -v h0="$h0" -v h1="$h1" \
		'BEGIN { printf "%-14s %5d conns  RSS %6d -> %6d KB  %6.2f KB/conn  Pss %6.2f  after a GC %6.2f  live heap %5.2f KB/conn\n", n, c, r0, r1, (r1-r0)/c, (p1-p0)/c, (r2-r0)/c, (h1-h0)/c }'
}

echo "# $(date -u +%FT%TZ) $(git rev-parse --short HEAD) N=$N TLS_N=$TLS_N settle=${SETTLE}s; $(nproc) CPUs, shared machine; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2); $(go version | cut -d' ' -f3); $(nginx -v 2>&1)"
measure loop_h1 sd-loop h1 "$N"
measure goroutine_h1 sd-goroutine h1 "$N"
measure nginx_h1 nginx h1 "$N"
if [ "$TLS_N" -gt 0 ]; then
	measure loop_tls sd-loop tls "$TLS_N"
	measure loop_h2 sd-loop h2 "$TLS_N"
	measure goroutine_tls sd-goroutine tls "$TLS_N"
	measure goroutine_h2 sd-goroutine h2 "$TLS_N"
	measure nginx_tls nginx tls "$TLS_N"
	measure nginx_h2 nginx h2 "$TLS_N"
fi
