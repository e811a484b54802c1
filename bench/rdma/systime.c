// systime.c: an LD_PRELOAD library that times the libc system-call
// wrappers libfabric's tcp provider uses (poll, epoll_wait, read, write,
// send, recv, sendto, recvfrom) and writes their counts and mean
// durations to $SYSTIME_LOG: every 20,000 sends, and at exit (C exit
// only; Go's os.Exit runs no destructors, hence the periodic lines).
// Go's own system calls (the runtime's futex, epoll_pwait, nanosleep) do
// not go through libc and are not seen; count those with perf stat.
// profile.sh builds and uses it. A measuring aid, not part of simdedge.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { S_POLL, S_EPOLL, S_READ, S_WRITE, S_SEND, S_RECV, S_SENDTO, S_RECVFROM, N };
static const char *names[N] = {"poll", "epoll_wait", "read", "write", "send", "recv", "sendto", "recvfrom"};
static _Atomic uint64_t count[N], nanos[N], sends;

static uint64_t now(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void dump(void) {
	const char *path = getenv("SYSTIME_LOG");
	char line[1024];
	int o = snprintf(line, sizeof line, "systime pid %d:", getpid());
	for (int i = 0; i < N; i++) {
		uint64_t c = count[i];
		if (c >= 1000 && o < (int)sizeof line)
			o += snprintf(line + o, sizeof line - o, " %s %llu x %.0f ns", names[i],
				(unsigned long long)c, (double)nanos[i] / (double)c);
	}
	if (o >= (int)sizeof line - 1)
		o = (int)sizeof line - 2;
	line[o++] = '\n';
	line[o] = 0;
	FILE *f = fopen(path ? path : "/tmp/systime.log", "a");
	if (f) {
		fputs(line, f);
		fclose(f);
	}
	for (int i = 0; i < N; i++)
		count[i] = nanos[i] = 0;
}

__attribute__((destructor)) static void at_exit(void) { dump(); }

#define REAL(name, ...) \
	static __typeof__(__VA_ARGS__) *real; \
	if (!real) \
		real = dlsym(RTLD_NEXT, name)
#define TIMED(idx, expr) \
	uint64_t t0 = now(); \
	__auto_type r = expr; \
	count[idx]++; \
	nanos[idx] += now() - t0
#define SENT() \
	if (++sends % 20000 == 0) \
		dump()

int poll(struct pollfd *p, nfds_t n, int t) {
	REAL("poll", poll);
	TIMED(S_POLL, real(p, n, t));
	return r;
}

int epoll_wait(int e, struct epoll_event *ev, int m, int t) {
	REAL("epoll_wait", epoll_wait);
	TIMED(S_EPOLL, real(e, ev, m, t));
	return r;
}

ssize_t read(int fd, void *b, size_t l) {
	REAL("read", read);
	TIMED(S_READ, real(fd, b, l));
	return r;
}

ssize_t write(int fd, const void *b, size_t l) {
	REAL("write", write);
	TIMED(S_WRITE, real(fd, b, l));
	return r;
}

ssize_t send(int fd, const void *b, size_t l, int fl) {
	REAL("send", send);
	TIMED(S_SEND, real(fd, b, l, fl));
	SENT();
	return r;
}

ssize_t recv(int fd, void *b, size_t l, int fl) {
	REAL("recv", recv);
	TIMED(S_RECV, real(fd, b, l, fl));
	return r;
}

ssize_t sendto(int fd, const void *b, size_t l, int fl, const struct sockaddr *a, socklen_t al) {
	REAL("sendto", sendto);
	TIMED(S_SENDTO, real(fd, b, l, fl, a, al));
	SENT();
	return r;
}

ssize_t recvfrom(int fd, void *b, size_t l, int fl, struct sockaddr *a, socklen_t *al) {
	REAL("recvfrom", recvfrom);
	TIMED(S_RECVFROM, real(fd, b, l, fl, a, al));
	return r;
}
