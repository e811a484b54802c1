//go:build rdma && cgo

// C side of the libfabric binding; see shim.h. Functions return 0 or a
// negative libfabric code (-FI_E*), which Go turns into errors.

#include "shim.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>

// The oldest API whose mr_mode bits the binding relies on.
#define SD_API FI_VERSION(1, 9)

// What the binding copes with: every memory-registration requirement it
// handles (local descriptors, virtual addresses, provider keys, allocated
// memory) and the context modes its slots provide.
#define SD_MR_MODE (FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY)
#define SD_MODE (FI_CONTEXT | FI_CONTEXT2 | FI_RX_CQ_DATA)

// How long Accept waits for FI_CONNECTED after fi_accept.
#define SD_ACCEPT_MS 10000

// Room for a connection-management event; no private data is exchanged.
#define SD_CM_ENTRY (sizeof(struct fi_eq_cm_entry) + 64)

static struct fi_info *sd_hints(const char *prov, const char *fabric_name, const char *domain_name) {
	struct fi_info *h = fi_allocinfo();
	if (!h)
		return NULL;
	h->ep_attr->type = FI_EP_MSG;
	h->caps = FI_MSG | FI_RMA;
	h->mode = SD_MODE;
	h->domain_attr->mr_mode = SD_MR_MODE;
	h->domain_attr->threading = FI_THREAD_SAFE;
	if (prov && *prov)
		h->fabric_attr->prov_name = strdup(prov);
	if (fabric_name)
		h->fabric_attr->name = strdup(fabric_name);
	if (domain_name)
		h->domain_attr->name = strdup(domain_name);
	return h;
}

int sd_provider_exists(const char *prov) {
	struct fi_info *h = fi_allocinfo(), *info = NULL;
	if (!h)
		return -FI_ENOMEM;
	h->fabric_attr->prov_name = strdup(prov);
	h->mode = ~0ULL;
	h->domain_attr->mr_mode = ~0 & ~(FI_MR_BASIC | FI_MR_SCALABLE);
	int ret = fi_getinfo(SD_API, NULL, NULL, 0, h, &info);
	fi_freeinfo(h);
	if (info)
		fi_freeinfo(info);
	return ret == 0;
}

int sd_fabric_open(const char *prov, const char *node, int cq_size, sd_fabric **out) {
	struct fi_info *h = sd_hints(prov, NULL, NULL), *info = NULL;
	if (!h)
		return -FI_ENOMEM;
	int ret = fi_getinfo(SD_API, node && *node ? node : NULL, NULL, node && *node ? FI_SOURCE : 0, h, &info);
	fi_freeinfo(h);
	if (ret)
		return ret;
	sd_fabric *f = calloc(1, sizeof *f);
	if (!f) {
		fi_freeinfo(info);
		return -FI_ENOMEM;
	}
	// Keep only the first match: fabric and domain come from it, and
	// endpoints ask for infos with the same names.
	fi_freeinfo(info->next);
	info->next = NULL;
	f->info = info;
	f->cq_size = cq_size;
	f->mr_mode = info->domain_attr->mr_mode;
	ret = fi_fabric(info->fabric_attr, &f->fabric, NULL);
	if (ret)
		goto fail;
	ret = fi_domain(f->fabric, info, &f->domain, NULL);
	if (ret)
		goto fail;
	*out = f;
	return 0;
fail:
	sd_fabric_close(f);
	return ret;
}

int sd_fabric_close(sd_fabric *f) {
	int ret = 0;
	if (f->domain)
		ret = fi_close(&f->domain->fid);
	if (f->fabric) {
		int r = fi_close(&f->fabric->fid);
		if (!ret)
			ret = r;
	}
	fi_freeinfo(f->info);
	free(f);
	return ret;
}

const char *sd_provider_name(sd_fabric *f) { return f->info->fabric_attr->prov_name; }

uint64_t sd_max_msg(sd_fabric *f) { return f->info->ep_attr->max_msg_size; }

int sd_mr_reg(sd_fabric *f, uintptr_t buf, size_t len, uint64_t req_key,
	struct fid_mr **mr, uintptr_t *desc, uint64_t *key) {
	uint64_t access = FI_SEND | FI_RECV | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
	int ret = fi_mr_reg(f->domain, (void *)buf, len, access, 0, req_key, 0, mr, NULL);
	if (ret)
		return ret;
	*desc = (uintptr_t)fi_mr_desc(*mr);
	*key = fi_mr_key(*mr);
	if (*key == FI_KEY_NOTAVAIL) {
		fi_close(&(*mr)->fid);
		*mr = NULL;
		return -FI_ENOKEY;
	}
	return 0;
}

int sd_mr_close(struct fid_mr *mr) { return fi_close(&mr->fid); }

static int sd_getwait(struct fid *fid, int *fd) {
	return fi_control(fid, FI_GETWAIT, fd);
}

static int sd_eq_open(sd_fabric *f, struct fid_eq **eq, int *fd) {
	struct fi_eq_attr attr = {.size = 16, .wait_obj = FI_WAIT_FD};
	int ret = fi_eq_open(f->fabric, &attr, eq, NULL);
	if (ret)
		return ret;
	return sd_getwait(&(*eq)->fid, fd);
}

static int64_t sd_now_ms(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

// sd_block polls fds (the last may be a wake eventfd, -1 for none) until
// one is readable or timeout_ms (negative: forever) passes. It returns
// SD_READY, SD_WOKEN when the wake fd fired, or -FI_ETIMEDOUT.
static int sd_block(struct pollfd *p, int n, int wakefd, int timeout_ms) {
	for (;;) {
		int r = poll(p, n, timeout_ms);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -FI_ETIMEDOUT;
		if (wakefd >= 0 && p[n - 1].revents)
			return SD_WOKEN;
		return SD_READY;
	}
}

static int sd_remaining(int64_t deadline) {
	if (deadline < 0)
		return -1;
	int64_t left = deadline - sd_now_ms();
	return left < 0 ? 0 : (int)left;
}

// sd_eq_wait reads one event from eq, waiting up to timeout_ms (negative:
// forever) and returning SD_WOKEN when wakefd fires. An error event comes
// back as its negated error code.
static int sd_eq_wait(sd_fabric *f, struct fid_eq *eq, int eqfd, int wakefd, int timeout_ms,
	uint32_t *event, struct fi_eq_cm_entry *entry) {
	int64_t deadline = timeout_ms < 0 ? -1 : sd_now_ms() + timeout_ms;
	for (;;) {
		ssize_t n = fi_eq_read(eq, event, entry, SD_CM_ENTRY, 0);
		if (n >= 0)
			return 0;
		if (n == -FI_EAVAIL) {
			struct fi_eq_err_entry err = {0};
			fi_eq_readerr(eq, &err, 0);
			if (err.fid == NULL && err.err == 0)
				continue;
			return -(err.err ? err.err : FI_EOTHER);
		}
		if (n != -FI_EAGAIN)
			return (int)n;
		struct fid *fids[1] = {&eq->fid};
		int ret = fi_trywait(f->fabric, fids, 1);
		if (ret == -FI_EAGAIN)
			continue;
		if (ret)
			return ret;
		struct pollfd p[2] = {{.fd = eqfd, .events = POLLIN}, {.fd = wakefd, .events = POLLIN}};
		ret = sd_block(p, wakefd >= 0 ? 2 : 1, wakefd, sd_remaining(deadline));
		if (ret)
			return ret;
	}
}

static int sd_fill_addr(struct sockaddr *sa, sd_addr *a) {
	memset(a, 0, sizeof *a);
	if (sa->sa_family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)sa;
		a->family = 4;
		memcpy(a->ip, &in->sin_addr, 4);
		a->port = ntohs(in->sin_port);
	} else if (sa->sa_family == AF_INET6) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)sa;
		a->family = 6;
		memcpy(a->ip, &in6->sin6_addr, 16);
		a->port = ntohs(in6->sin6_port);
	}
	return 0;
}

int sd_listen(sd_fabric *f, const char *node, const char *service, sd_pep **out) {
	struct fi_info *h = sd_hints(sd_provider_name(f), f->info->fabric_attr->name, f->info->domain_attr->name);
	struct fi_info *info = NULL;
	if (!h)
		return -FI_ENOMEM;
	int ret = fi_getinfo(SD_API, node, service, FI_SOURCE, h, &info);
	fi_freeinfo(h);
	if (ret)
		return ret;
	sd_pep *p = calloc(1, sizeof *p);
	if (!p) {
		fi_freeinfo(info);
		return -FI_ENOMEM;
	}
	p->f = f;
	p->info = info;
	p->eqfd = -1;
	p->wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (p->wakefd < 0) {
		ret = -errno;
		goto fail;
	}
	ret = sd_eq_open(f, &p->eq, &p->eqfd);
	if (ret)
		goto fail;
	ret = fi_passive_ep(f->fabric, info, &p->pep, NULL);
	if (ret)
		goto fail;
	ret = fi_pep_bind(p->pep, &p->eq->fid, 0);
	if (ret)
		goto fail;
	ret = fi_listen(p->pep);
	if (ret)
		goto fail;
	*out = p;
	return 0;
fail:
	sd_pep_close(p);
	return ret;
}

int sd_pep_getname(sd_pep *p, sd_addr *a) {
	struct sockaddr_storage ss;
	size_t len = sizeof ss;
	memset(a, 0, sizeof *a);
	int ret = fi_getname(&p->pep->fid, &ss, &len);
	if (ret)
		return ret;
	return sd_fill_addr((struct sockaddr *)&ss, a);
}

void sd_pep_wake(sd_pep *p) {
	uint64_t one = 1;
	if (write(p->wakefd, &one, sizeof one) < 0) {
		// The counter cannot overflow with one write per Close; nothing to do.
	}
}

int sd_pep_close(sd_pep *p) {
	int ret = 0;
	if (p->pep)
		ret = fi_close(&p->pep->fid);
	if (p->eq) {
		int r = fi_close(&p->eq->fid);
		if (!ret)
			ret = r;
	}
	if (p->wakefd >= 0)
		close(p->wakefd);
	fi_freeinfo(p->info);
	free(p);
	return ret;
}

// sd_pollfd_sync makes waitfd watch the FI_WAIT_POLLFD completion
// queue's descriptors as they are now: the provider adds and removes them
// as endpoints connect and leave, and changes their events (POLLOUT while
// a send waits for room), and says so with the change index.
static int sd_pollfd_sync(sd_ep *e, int fresh) {
	struct fi_wait_pollfd pf;
	int ret;
	for (;;) {
		pf.change_index = 0;
		pf.nfds = e->pfd_cap;
		pf.fd = e->pfd_next;
		ret = fi_control(&e->cq->fid, FI_GETWAIT, &pf);
		if (ret != -FI_ETOOSMALL)
			break;
		size_t cap = pf.nfds + 4;
		struct pollfd *a = realloc(e->pfd, cap * sizeof *a), *b;
		if (!a)
			return -FI_ENOMEM;
		e->pfd = a;
		if (!(b = realloc(e->pfd_next, cap * sizeof *b)))
			return -FI_ENOMEM;
		e->pfd_next = b;
		e->pfd_cap = cap;
	}
	if (ret)
		return ret;
	// The change index is not enough: libfabric 1.17's tcp provider
	// switches a socket to POLLIN|POLLOUT while a send waits for room
	// without moving it (seen: a 64 MiB rendezvous stalled), so the
	// descriptors and events are compared too (memory only, no call).
	if (!fresh && e->pfd && pf.change_index == e->pfd_index && pf.nfds == e->npfd) {
		size_t i = 0;
		while (i < pf.nfds && e->pfd[i].fd == e->pfd_next[i].fd && e->pfd[i].events == e->pfd_next[i].events)
			i++;
		if (i == pf.nfds)
			return 0;
	}
	// Descriptors gone: out of waitfd. One already closed left it by
	// itself (ENOENT, or EBADF); either is fine.
	for (size_t i = 0; i < (fresh ? 0 : e->npfd); i++) {
		size_t j = 0;
		while (j < pf.nfds && e->pfd_next[j].fd != e->pfd[i].fd)
			j++;
		if (j == pf.nfds)
			epoll_ctl(e->epfd, EPOLL_CTL_DEL, e->pfd[i].fd, NULL);
	}
	for (size_t j = 0; j < pf.nfds; j++) {
		// POLLIN, POLLOUT and POLLPRI have the values of their EPOLL*
		// counterparts.
		// Fresh (none of them in waitfd), ADD first; else MOD first.
		struct epoll_event ev = {.events = (uint32_t)(e->pfd_next[j].events & (POLLIN | POLLOUT | POLLPRI))};
		int fd = e->pfd_next[j].fd;
		if (epoll_ctl(e->epfd, fresh ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, fd, &ev) < 0) {
			if (errno != (fresh ? EEXIST : ENOENT) ||
				epoll_ctl(e->epfd, fresh ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd, &ev) < 0)
				return -errno;
		}
	}
	struct pollfd *t = e->pfd;
	e->pfd = e->pfd_next;
	e->pfd_next = t;
	e->npfd = pf.nfds;
	e->pfd_index = pf.change_index;
	return 0;
}

// sd_pollfd_check is sd_pollfd_sync for the reader and posters alike. A
// post can make the provider wait for room in a socket (POLLOUT) while
// the reader is blocked on waitfd watching only POLLIN: the poster
// updates waitfd then, and epoll wakes the reader once the socket takes
// more. It costs a copy of the descriptor list per post, no system call
// unless something changed.
// While the reader spins (not armed) there is nothing to update: the
// spinning reader drives the provider's progress itself.
static int sd_pollfd_check(sd_ep *e) {
	if (!e->pollfd || !__atomic_load_n(&e->armed, __ATOMIC_ACQUIRE))
		return 0;
	pthread_mutex_lock(&e->pfd_mu);
	int ret = e->armed ? sd_pollfd_sync(e, 0) : 0;
	pthread_mutex_unlock(&e->pfd_mu);
	return ret;
}

// sd_pollfd_arm puts the queue's descriptors into waitfd, as they are now,
// before the reader blocks. Adding a descriptor that is already readable
// (a completion signalled, data arrived since fi_trywait) reports it at
// once: level-triggered epoll looks at the descriptor on EPOLL_CTL_ADD.
static int sd_pollfd_arm(sd_ep *e) {
	if (!e->pollfd)
		return 0;
	pthread_mutex_lock(&e->pfd_mu);
	int fresh = !e->armed;
	int ret = sd_pollfd_sync(e, fresh);
	if (ret == 0)
		__atomic_store_n(&e->armed, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&e->pfd_mu);
	return ret;
}

// sd_pollfd_disarm takes the queue's descriptors out of waitfd while the
// reader spins: one epoll_ctl per descriptor per block, against epoll
// callbacks on every send and every completion signal.
static void sd_pollfd_disarm(sd_ep *e) {
	pthread_mutex_lock(&e->pfd_mu);
	if (e->armed) {
		__atomic_store_n(&e->armed, 0, __ATOMIC_RELEASE);
		for (size_t i = 0; i < e->npfd; i++)
			epoll_ctl(e->epfd, EPOLL_CTL_DEL, e->pfd[i].fd, NULL);
	}
	pthread_mutex_unlock(&e->pfd_mu);
}

// sd_ep_open creates an endpoint for info (which it takes over) with its
// event queue, completion queues and slot table, enabled but not yet
// connected.
static int sd_ep_open(sd_fabric *f, struct fi_info *info, sd_ep **out) {
	sd_ep *e = calloc(1, sizeof *e);
	if (!e) {
		fi_freeinfo(info);
		return -FI_ENOMEM;
	}
	e->f = f;
	e->info = info;
	e->eqfd = e->cqfd = e->waitfd = e->epfd = -1;
	pthread_mutex_init(&e->mu, NULL);
	pthread_mutex_init(&e->pfd_mu, NULL);
	int ret;
	e->wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (e->wakefd < 0) {
		ret = -errno;
		goto fail;
	}
	int size = f->cq_size;
	if (info->tx_attr->size && info->tx_attr->size > (size_t)size)
		info->tx_attr->size = size;
	if (info->rx_attr->size && info->rx_attr->size > (size_t)size)
		info->rx_attr->size = size;
	e->nslots = (uint32_t)(info->tx_attr->size + info->rx_attr->size);
	if (e->nslots == 0)
		e->nslots = 2 * size;
	e->slots = calloc(e->nslots, sizeof *e->slots);
	e->nout = size * 2;
	e->out = calloc(e->nout, sizeof *e->out);
	if (!e->slots || !e->out) {
		ret = -FI_ENOMEM;
		goto fail;
	}
	for (uint32_t i = 0; i < e->nslots; i++)
		e->slots[i].next = i + 2 <= e->nslots ? i + 2 : 0;
	e->free_head = 1;

	ret = sd_eq_open(f, &e->eq, &e->eqfd);
	if (ret)
		goto fail;
	e->epfd = e->waitfd = epoll_create1(EPOLL_CLOEXEC);
	if (e->waitfd < 0) {
		ret = -errno;
		goto fail;
	}
	// The completion queue's wait object. With f->pollfd (the transport's
	// busy-polling connections), FI_WAIT_POLLFD where the provider has
	// it, so that its progress (every fi_cq_read of the tcp provider) is
	// a poll(2) over its descriptors rather than an epoll_wait on an
	// epoll set holding the socket, whose callbacks cost every send and
	// wake-up signal into a watched descriptor 0.5-1 µs more, on both
	// sides (rdma/README.md, fourth pass). The descriptors are in waitfd
	// only while the reader blocks (sd_pollfd_arm before, sd_spin takes
	// them out again): in the set, the same callbacks run on every send
	// and signal (sixth pass: -20 % CPU per request, two processes busy). Blocking waits cost more that
	// way (one process, blocking: 43 -> 66-82 µs per request, more
	// context switches), so the others keep FI_WAIT_FD.
	struct fi_cq_attr cq = {.size = 2 * size, .format = FI_CQ_FORMAT_MSG, .wait_obj = FI_WAIT_POLLFD};
	ret = f->pollfd ? fi_cq_open(f->domain, &cq, &e->cq, NULL) : -FI_ENOSYS;
	if (ret == 0) {
		e->pollfd = 1;
		if ((ret = sd_pollfd_arm(e))) {
			e->pollfd = 0;
			fi_close(&e->cq->fid);
			e->cq = NULL;
		}
	}
	if (!e->pollfd) {
		cq.wait_obj = FI_WAIT_FD;
		ret = fi_cq_open(f->domain, &cq, &e->cq, NULL);
		if (ret)
			goto fail;
		if ((ret = sd_getwait(&e->cq->fid, &e->cqfd)))
			goto fail;
	}
	int fds[3] = {e->eqfd, e->wakefd, e->cqfd};
	for (int i = 0; i < (e->pollfd ? 2 : 3); i++) {
		struct epoll_event ev = {.events = EPOLLIN};
		if (epoll_ctl(e->waitfd, EPOLL_CTL_ADD, fds[i], &ev) < 0) {
			ret = -errno;
			goto fail;
		}
	}
	// No FI_COMPLETION in the transmit op_flags: with it the tcp
	// provider completes every send, also those posted without the flag
	// under FI_SELECTIVE_COMPLETION (measured: a completion and a wait
	// descriptor signal, write and read, per send). Under selective
	// completion sd_post1 asks for each completion explicitly instead.
	info->tx_attr->op_flags &= ~FI_COMPLETION;
	ret = fi_endpoint(f->domain, info, &e->ep, NULL);
	if (ret)
		goto fail;
	if ((ret = fi_ep_bind(e->ep, &e->eq->fid, 0)))
		goto fail;
	// Selective completion for sends lets the message transport post
	// most sends without a completion: each completion written to the
	// queue wakes a waiting poller once more (measured: one wake-up per
	// request per side). Providers that refuse it get the plain binding.
	if (fi_ep_bind(e->ep, &e->cq->fid, FI_TRANSMIT | FI_SELECTIVE_COMPLETION) == 0) {
		e->selective = 1;
		ret = fi_ep_bind(e->ep, &e->cq->fid, FI_RECV);
	} else {
		ret = fi_ep_bind(e->ep, &e->cq->fid, FI_TRANSMIT | FI_RECV);
	}
	if (ret || (ret = fi_enable(e->ep)))
		goto fail;
	*out = e;
	return 0;
fail:
	sd_ep_close(e);
	return ret;
}

// sd_connected waits for FI_CONNECTED on e's event queue; wakefd (or -1)
// interrupts it with SD_WOKEN.
static int sd_connected(sd_ep *e, int wakefd, int timeout_ms) {
	uint32_t event;
	union {
		struct fi_eq_cm_entry cm;
		uint8_t raw[SD_CM_ENTRY];
	} entry;
	int ret = sd_eq_wait(e->f, e->eq, e->eqfd, wakefd, timeout_ms, &event, &entry.cm);
	if (ret)
		return ret;
	if (event == FI_CONNECTED) {
		// Reset the event queue's wait descriptor, which the event
		// just read signalled: Wait blocks without a look at the event
		// queue (sd_wait_prepare), trusting the descriptor to become
		// readable at the next event, which it does only from reset.
		struct fid *fids[1] = {&e->eq->fid};
		fi_trywait(e->f->fabric, fids, 1);
		return 0;
	}
	if (event == FI_SHUTDOWN)
		return -FI_ECONNREFUSED;
	return -FI_EOTHER;
}

int sd_pep_accept(sd_pep *p, int timeout_ms, sd_ep **out) {
	uint32_t event;
	union {
		struct fi_eq_cm_entry cm;
		uint8_t raw[SD_CM_ENTRY];
	} entry;
	for (;;) {
		int ret = sd_eq_wait(p->f, p->eq, p->eqfd, p->wakefd, timeout_ms, &event, &entry.cm);
		if (ret)
			return ret;
		if (event != FI_CONNREQ)
			continue; // only connection requests arrive here
		sd_ep *e;
		// On failure the request is left unanswered: the info (and with
		// it the request's handle) belongs to the endpoint being built,
		// which sd_ep_open has already closed; the peer times out.
		ret = sd_ep_open(p->f, entry.cm.info, &e);
		if (ret)
			return ret;
		// The peer answers fi_accept at once unless it gave up; the
		// bound keeps a vanished peer from holding Accept, and the
		// listener's Close interrupts it.
		ret = fi_accept(e->ep, NULL, 0);
		if (!ret)
			ret = sd_connected(e, p->wakefd, SD_ACCEPT_MS);
		if (ret) {
			sd_ep_close(e);
			return ret;
		}
		*out = e;
		return 0;
	}
}

int sd_dial(sd_fabric *f, const char *node, const char *service, int timeout_ms, sd_ep **out) {
	struct fi_info *h = sd_hints(sd_provider_name(f), f->info->fabric_attr->name, f->info->domain_attr->name);
	struct fi_info *info = NULL;
	if (!h)
		return -FI_ENOMEM;
	int ret = fi_getinfo(SD_API, node, service, 0, h, &info);
	fi_freeinfo(h);
	if (ret)
		return ret;
	fi_freeinfo(info->next);
	info->next = NULL;
	sd_ep *e;
	ret = sd_ep_open(f, info, &e);
	if (ret)
		return ret;
	ret = fi_connect(e->ep, e->info->dest_addr, NULL, 0);
	if (!ret)
		ret = sd_connected(e, -1, timeout_ms);
	if (ret) {
		sd_ep_close(e);
		return ret;
	}
	*out = e;
	return 0;
}

int sd_ep_names(sd_ep *e, sd_addr *local, sd_addr *remote) {
	struct sockaddr_storage ss;
	size_t len = sizeof ss;
	memset(local, 0, sizeof *local);
	memset(remote, 0, sizeof *remote);
	if (fi_getname(&e->ep->fid, &ss, &len) == 0)
		sd_fill_addr((struct sockaddr *)&ss, local);
	len = sizeof ss;
	if (fi_getpeer(e->ep, &ss, &len) == 0)
		sd_fill_addr((struct sockaddr *)&ss, remote);
	return 0;
}

static sd_slot *sd_slot_get(sd_ep *e, int op, uint64_t id, uint64_t len) {
	if (!e->free_head)
		return NULL;
	sd_slot *s = &e->slots[e->free_head - 1];
	e->free_head = s->next;
	s->id = id;
	s->len = len;
	s->op = op;
	if (op == SD_RECV)
		e->recvs++;
	else
		e->ops++;
	return s;
}

static void sd_slot_put(sd_ep *e, sd_slot *s) {
	if (s->op == SD_RECV)
		e->recvs--;
	else
		e->ops--;
	s->op = 0;
	s->next = e->free_head;
	e->free_head = (uint32_t)(s - e->slots) + 1;
}

// sd_post1 posts one operation; e->mu is held.
static int sd_post1(sd_ep *e, int op, uintptr_t buf, size_t len, uintptr_t desc_,
	uint64_t raddr, uint64_t rkey, uint64_t id) {
	sd_slot *s = sd_slot_get(e, op, id, len);
	if (!s)
		return -FI_EAGAIN;
	void *desc = (void *)desc_;
	ssize_t ret;
	// Bound with FI_SELECTIVE_COMPLETION, a transmit operation completes
	// only when posted with FI_COMPLETION, which only the *msg calls
	// take; fi_send, fi_read and fi_write would complete silently.
	struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
	struct fi_msg msg = {.msg_iov = &iov, .desc = &desc, .iov_count = 1, .context = s};
	struct fi_rma_iov rma = {.addr = raddr, .len = len, .key = rkey};
	struct fi_msg_rma mrma = {.msg_iov = &iov, .desc = &desc, .iov_count = 1,
		.rma_iov = &rma, .rma_iov_count = 1, .context = s};
	switch (op) {
	case SD_RECV:
		ret = fi_recv(e->ep, (void *)buf, len, desc, 0, s);
		break;
	case SD_SEND:
		ret = e->selective ? fi_sendmsg(e->ep, &msg, FI_COMPLETION)
				   : fi_send(e->ep, (void *)buf, len, desc, 0, s);
		break;
	case SD_READ:
		ret = e->selective ? fi_readmsg(e->ep, &mrma, FI_COMPLETION)
				   : fi_read(e->ep, (void *)buf, len, desc, 0, raddr, rkey, s);
		break;
	case SD_WRITE:
		ret = e->selective ? fi_writemsg(e->ep, &mrma, FI_COMPLETION)
				   : fi_write(e->ep, (void *)buf, len, desc, 0, raddr, rkey, s);
		break;
	default:
		ret = -FI_EINVAL;
	}
	if (ret)
		sd_slot_put(e, s);
	return (int)ret;
}

int sd_post(sd_ep *e, int op, uintptr_t buf, size_t len, uintptr_t desc,
	uint64_t raddr, uint64_t rkey, uint64_t id) {
	pthread_mutex_lock(&e->mu);
	int ret = sd_post1(e, op, buf, len, desc, raddr, rkey, id);
	pthread_mutex_unlock(&e->mu);
	if (op != SD_RECV)
		sd_pollfd_check(e);
	return ret;
}

int64_t sd_post_batch(sd_ep *e, int op, uintptr_t base, uintptr_t desc, sd_span *spans, int n) {
	int ret = 0, i;
	pthread_mutex_lock(&e->mu);
	for (i = 0; i < n; i++) {
		ret = sd_post1(e, op, base + (uintptr_t)spans[i].off, (size_t)spans[i].len, desc, 0, 0, spans[i].id);
		if (ret)
			break;
	}
	pthread_mutex_unlock(&e->mu);
	if (op != SD_RECV)
		sd_pollfd_check(e);
	// Count and error in one value: an out parameter would make Go
	// allocate the variable it points to on every call.
	return (int64_t)i | (int64_t)(uint32_t)(-ret) << 32;
}

// sd_drain reads up to n - *got completions from cq into e->out.
static int sd_drain(sd_ep *e, struct fid_cq *cq, int n, int *got) {
	struct fi_cq_msg_entry buf[64];
	while (*got < n) {
		int want = n - *got;
		if (want > 64)
			want = 64;
		ssize_t r = fi_cq_read(cq, buf, want);
		if (r == -FI_EAGAIN)
			return 0;
		if (r == -FI_EAVAIL) {
			struct fi_cq_err_entry err = {0};
			if (fi_cq_readerr(cq, &err, 0) != 1)
				return 0;
			sd_slot *s = err.op_context;
			sd_comp *c = &e->out[(*got)++];
			c->err = err.err ? err.err : FI_EOTHER;
			c->prov_err = err.prov_errno;
			c->len = err.len;
			if (s == &e->unsig) {
				c->id = s->id;
				c->op = SD_SEND;
			} else if (s) {
				c->id = s->id;
				c->op = s->op;
				pthread_mutex_lock(&e->mu);
				sd_slot_put(e, s);
				pthread_mutex_unlock(&e->mu);
			} else {
				c->id = 0;
				c->op = 0;
			}
			continue;
		}
		if (r < 0)
			return (int)r;
		pthread_mutex_lock(&e->mu);
		for (ssize_t i = 0; i < r; i++) {
			sd_slot *s = buf[i].op_context;
			if (s == &e->unsig)
				continue; // a provider that completes silent sends anyway
			sd_comp *c = &e->out[(*got)++];
			c->id = s->id;
			c->op = s->op;
			c->len = s->op == SD_RECV ? buf[i].len : s->len;
			c->err = 0;
			c->prov_err = 0;
			sd_slot_put(e, s);
		}
		pthread_mutex_unlock(&e->mu);
		// Fewer than asked: the queue is empty now. Asking again would
		// be one more progress call of the provider (tcp: a poll(2) that
		// finds the queue's own completion signal set, and a read to
		// reset it) between a request's arrival and its reply: 2-3 µs on
		// the round trip's critical path on each side, where fi_pingpong
		// pays them while it waits (rdma/README.md, sixth pass). The next
		// poll takes whatever arrives meanwhile.
		if (r < want)
			return 0;
	}
	return 0;
}

// sd_send_unsignaled posts a send without a completion; e->mu is held.
static int sd_send_unsignaled(sd_ep *e, uintptr_t buf, size_t len, uintptr_t desc, uint64_t id) {
	struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
	void *d = (void *)desc;
	struct fi_msg msg = {.msg_iov = &iov, .desc = &d, .iov_count = 1, .context = &e->unsig};
	e->unsig.id = id;
	return (int)fi_sendmsg(e->ep, &msg, 0);
}

int64_t sd_exchange(sd_ep *e, uintptr_t rbase, uintptr_t rdesc, sd_span *r, int nr,
	uintptr_t sbase, uintptr_t sdesc, sd_span *s, int ns, int npoll, int64_t spin_ns) {
	int ret = 0, posted = 0;
	if (nr || ns) {
		pthread_mutex_lock(&e->mu);
		for (int i = 0; i < nr && !ret; i++, posted += !ret)
			ret = sd_post1(e, SD_RECV, rbase + (uintptr_t)r[i].off, (size_t)r[i].len, rdesc, 0, 0, r[i].id);
		for (int i = 0; i < ns && !ret; i++, posted += !ret) {
			uintptr_t buf = sbase + (uintptr_t)s[i].off;
			if (e->selective && (s[i].id & SD_UNSIGNALED))
				ret = sd_send_unsignaled(e, buf, (size_t)s[i].len, sdesc, s[i].id);
			else
				ret = sd_post1(e, SD_SEND, buf, (size_t)s[i].len, sdesc, 0, 0, s[i].id);
		}
		pthread_mutex_unlock(&e->mu);
		if (ns)
			sd_pollfd_check(e);
	}
	int got = 0;
	if (!ret && npoll > 0) {
		int n = spin_ns > 0 ? sd_spin(e, npoll, spin_ns) : sd_poll(e, npoll);
		if (n < 0)
			ret = n;
		else
			got = n;
	}
	return (int64_t)posted | (int64_t)got << 24 | (int64_t)(uint16_t)(-ret) << 48;
}

// sd_check_eq notes a shutdown or connection error on e's event queue.
static void sd_check_eq(sd_ep *e) {
	if (e->shutdown)
		return;
	uint32_t event;
	union {
		struct fi_eq_cm_entry cm;
		uint8_t raw[SD_CM_ENTRY];
	} entry;
	ssize_t n = fi_eq_read(e->eq, &event, &entry, sizeof entry, 0);
	if (n >= 0 && event == FI_SHUTDOWN) {
		e->shutdown = 1;
	} else if (n == -FI_EAVAIL) {
		struct fi_eq_err_entry err = {0};
		fi_eq_readerr(e->eq, &err, 0);
		e->shutdown = 1;
		e->eq_err = err.err ? err.err : FI_ECONNRESET;
	}
}

// sdEQEvery is how many consecutive empty polls pass between two looks at
// the event queue for a disconnect: each look may cost a system call, and a
// busy-polling loop makes thousands of empty polls per millisecond. Wait
// looks after a wake-up that found no completion (sd_wait_prepare).
#define SD_EQ_EVERY 64

// sd_poll fills e->out with up to n completions and returns how many.
int sd_poll(sd_ep *e, int n) {
	int got = 0;
	if (n > e->nout)
		n = e->nout;
	int ret = sd_drain(e, e->cq, n, &got);
	if (ret && got == 0)
		return ret;
	if (got == 0 && ++e->idle >= SD_EQ_EVERY) {
		e->idle = 0;
		sd_check_eq(e);
	}
	return got;
}

static int64_t sd_now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

// sd_spin is the busy poll loop of PollBusy in C: a loop of Go polls paid a
// cgo crossing, the Go side's locks and checks and a goroutine yield per
// empty poll, about as much again as the provider's own progress call
// (rdma/README.md, fourth pass), and a message that arrived during them
// waited for them.
int sd_spin(sd_ep *e, int n, int64_t budget_ns) {
	if (e->pollfd && __atomic_load_n(&e->armed, __ATOMIC_ACQUIRE))
		sd_pollfd_disarm(e);
	int64_t end = sd_now_ns() + budget_ns;
	for (;;) {
		int got = sd_poll(e, n);
		if (got != 0 || e->shutdown)
			return got;
		if (__atomic_load_n(&e->kick, __ATOMIC_ACQUIRE) || __atomic_load_n(&e->closing, __ATOMIC_ACQUIRE))
			return 0;
		if (sd_now_ns() >= end)
			return 0;
	}
}

// sd_wait_prepare is the step before Go's poller blocks on waitfd: it
// returns 1 when the peer has gone (nothing more will arrive), 0 when
// blocking is safe (fi_trywait), -FI_EAGAIN when completions or events
// are pending (poll again), or another negative error. Not full, it asks
// only the completion queue (one progress call of the provider: an
// epoll_wait for tcp) and leaves the event queue to its descriptor, which
// is in waitfd too: an event wakes the waiter, and a wake-up that finds
// no completion calls it full (Endpoint.waitStep). Full, it reads the
// event queue and asks both queues (three provider calls).
int sd_wait_prepare(sd_ep *e, int full) {
	int ret;
	if (!full) {
		if (e->shutdown)
			return 1;
		ret = fi_trywait(e->f->fabric, (struct fid *[]){&e->cq->fid}, 1);
	} else {
		sd_check_eq(e);
		if (e->shutdown)
			return 1;
		struct fid *fids[2] = {&e->cq->fid, &e->eq->fid};
		ret = fi_trywait(e->f->fabric, fids, 2);
	}
	// Blocking is safe: waitfd must watch the queue's descriptors as
	// they are now (a no-op unless the provider changed them, or a spin
	// took them out).
	if (ret == 0)
		ret = sd_pollfd_arm(e);
	return ret;
}

int sd_ep_waitfd(sd_ep *e) { return e->waitfd; }

void sd_ep_wake(sd_ep *e) {
	__atomic_store_n(&e->closing, 1, __ATOMIC_RELEASE);
	uint64_t one = 1;
	if (write(e->wakefd, &one, sizeof one) < 0) {
		// See sd_pep_wake.
	}
}

void sd_ep_counts(sd_ep *e, int64_t *recvs, int64_t *ops) {
	pthread_mutex_lock(&e->mu);
	*recvs = e->recvs;
	*ops = e->ops;
	pthread_mutex_unlock(&e->mu);
}

int sd_ep_close(sd_ep *e) {
	int ret = 0, r;
	if (e->ep) {
		fi_shutdown(e->ep, 0);
		ret = fi_close(&e->ep->fid);
	}
	struct fid *objs[2] = {e->cq ? &e->cq->fid : NULL, e->eq ? &e->eq->fid : NULL};
	for (int i = 0; i < 2; i++) {
		if (objs[i] && (r = fi_close(objs[i])) && !ret)
			ret = r;
	}
	if (e->wakefd >= 0)
		close(e->wakefd);
	// waitfd belongs to Go once the endpoint is adopted (sd_ep_waitfd);
	// Go closes it. Before that, on a failed open, it is ours.
	if (e->waitfd >= 0)
		close(e->waitfd);
	pthread_mutex_destroy(&e->mu);
	pthread_mutex_destroy(&e->pfd_mu);
	free(e->pfd);
	free(e->pfd_next);
	free(e->slots);
	free(e->out);
	fi_freeinfo(e->info);
	free(e);
	return ret;
}

int sd_noop(int x) { return x + 1; }
