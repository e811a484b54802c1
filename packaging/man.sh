#!/bin/sh
# man.sh BIN: writes simdedge(1) in roff to stdout, from the binary's own
# help texts (`simdedge -h` and each command's -h), so that the man page
# says what the installed binary does. Used by `make install` and `make deb`.
set -eu
bin=$1
# roff: a line may not start with . or ', and \ is an escape.
esc() { sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"; }
cat <<'HEAD'
.TH SIMDEDGE 1 "" "simdedge" "User Commands"
.SH NAME
simdedge \- HTTP edge server and reverse proxy
.SH SYNOPSIS
.nf
HEAD
"$bin" -h 2>&1 | esc
echo ".fi"
echo ".SH COMMANDS"
for c in serve check reload hash-password url version; do
	# A command this build does not have answers "unknown command".
	out=$("$bin" "$c" -h 2>&1 </dev/null) || true
	case $out in *"unknown command"*) continue ;; esac
	echo ".SS $c"
	echo ".nf"
	printf '%s\n' "$out" | esc
	echo ".fi"
done
cat <<'TAIL'
.SH SIGNALS
.TP
.B SIGHUP
reload the configuration file: applied as a whole, or refused with the reason in the log.
.TP
.B SIGTERM, SIGINT
drain: /ready answers 503, open requests finish within timeouts.drain, then the process exits.
.TP
.B SIGUSR1
reopen the access log file (for logrotate).
.SH SOCKET ACTIVATION
With LISTEN_FDS and LISTEN_PID set (systemd's simdedge.socket), each passed
TCP socket is served by the listener configured with the same address, so a
restart refuses no connection.
.SH FILES
.TP
.I /etc/simdedge/simdedge.yaml
the configuration of the packaged service
.TP
.I /var/lib/simdedge
state (ACME certificates)
.SH SEE ALSO
.BR systemctl (1),
.BR systemd.socket (5)
TAIL
