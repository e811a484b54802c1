# lib.sh: what the load scripts (bench/load/*.sh, bench/tls/run.sh) share.
# Sourced after W (the scratch directory) is set and PIDS=() declared; the
# caller's EXIT trap stops every PID in PIDS.

# start NAME CPU CMD...: runs CMD pinned to CPU, its output in $W/NAME.out;
# its PID goes in PIDS and in PID_NAME.
start() {
	local name=$1 cpu=$2
	shift 2
	taskset -c "$cpu" "$@" >"$W/$name.out" 2>&1 &
	PIDS+=($!)
	eval "PID_$name=$!"
}

# ticks PID: the process's CPU time so far (utime+stime of /proc/PID/stat),
# in clock ticks, HZ a second.
ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }
HZ=$(getconf CLK_TCK)

# nginx_conf NAME SERVER [HTTP]: writes $W/NAME/nginx.conf for a peer
# measured like simdedge: one worker and no master process, no access log,
# every temporary file in $W/NAME, keep-alive without a request cap. SERVER
# is the server block's body; HTTP adds lines at the http level (an
# upstream block). Start it with nginx -p "$W/NAME" -c "$W/NAME/nginx.conf".
nginx_conf() {
	mkdir -p "$W/$1/logs"
	cat >"$W/$1/nginx.conf" <<NGINX
daemon off;
master_process off;
worker_processes 1;
error_log $W/$1/logs/error.log warn;
pid $W/$1/nginx.pid;
events { worker_connections 4096; }
http {
	access_log off;
	client_body_temp_path $W/$1; proxy_temp_path $W/$1; fastcgi_temp_path $W/$1; uwsgi_temp_path $W/$1; scgi_temp_path $W/$1;
	keepalive_requests 100000000;
	${3:-}
	server { $2 }
}
NGINX
}

# NGINX_OK is a location that answers 200 "ok\n", the backend and origin
# every script measures against.
NGINX_OK='location / { default_type text/plain; return 200 "ok\n"; }'
