// C side of the libfabric binding. Every libfabric object lives in C
// memory; Go holds pointers to these structs (C pointers, which the cgo
// rules allow Go to keep) and never hands Go memory to C beyond one call.
// Values that look like pointers but need not be (memory descriptors, which
// some providers make small integers) cross as uintptr_t: Go's stack copier
// rejects a non-pointer held in an unsafe.Pointer.

#ifndef SIMDEDGE_RDMA_SHIM_H
#define SIMDEDGE_RDMA_SHIM_H

#include <stdint.h>
#include <stddef.h>
#include <poll.h>
#include <pthread.h>
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_errno.h>

// Work-request kinds; equal to the Go Op values.
enum { SD_RECV = 1, SD_SEND = 2, SD_READ = 3, SD_WRITE = 4 };

// Results of the blocking waits besides libfabric's negative codes.
enum { SD_READY = 0, SD_WOKEN = 1 };

// A fabric: the fi_info it was opened from, fabric and domain.
typedef struct sd_fabric {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	uint64_t mr_mode;
	int cq_size;
	int pollfd; // endpoints try FI_WAIT_POLLFD completion queues (Go sets it)
} sd_fabric;

// A work-request slot: its address is the operation context libfabric
// returns in the completion. The fi_context2 comes first so that providers
// that want FI_CONTEXT/FI_CONTEXT2 scratch space get it here.
typedef struct sd_slot {
	struct fi_context2 ctx;
	uint64_t id;
	uint64_t len;
	uint32_t op;
	uint32_t next; // free-list link (index + 1; 0 ends the list)
} sd_slot;

// A completion handed to Go.
typedef struct sd_comp {
	uint64_t id;
	uint64_t len;
	int32_t op;
	int32_t err;      // positive FI_E* code, 0 on success
	int32_t prov_err; // provider-specific code of a failed completion
	int32_t pad;
} sd_comp;

// A span of a batched post, laid out like Go's Span.
typedef struct sd_span {
	int64_t off;
	int64_t len;
	uint64_t id;
} sd_span;

// A connected endpoint with its event queue and its completion queue. One
// queue takes both directions' completions: with the tcp provider every
// fi_cq_read drives progress with an epoll_wait system call, so a second
// queue would double the cost of each Poll (measured: most of an idle
// Poll's time is that system call).
typedef struct sd_ep {
	sd_fabric *f;
	struct fi_info *info;
	struct fid_ep *ep;
	struct fid_eq *eq;
	struct fid_cq *cq;
	int eqfd, cqfd, wakefd;
	int waitfd; // epoll over cqfd (or pfd), eqfd and wakefd: what Go's poller waits on
	int epfd;   // waitfd, also once Go owns it (waitfd -1)

	// With an FI_WAIT_POLLFD completion queue (pollfd), cqfd is -1 and
	// the queue's wait descriptors are pfd[0..npfd), as of the queue's
	// change index pfd_index, all in waitfd too (sd_pollfd_sync).
	int pollfd;
	pthread_mutex_t pfd_mu; // guards the pfd fields: the reader and posters sync
	struct pollfd *pfd, *pfd_next;
	size_t npfd, pfd_cap;
	uint64_t pfd_index;
	// armed: pfd's descriptors are in waitfd. A spinning reader takes
	// them out (sd_spin) and puts them back only before it blocks
	// (sd_wait_prepare): in an epoll set, every wake-up of the socket
	// or of the queue's signal descriptor runs epoll's callbacks on the
	// waking side (rdma/README.md, fifth pass).
	int armed;
	unsigned idle; // empty polls since the event queue was last checked

	pthread_mutex_t mu; // guards the slot free list and the counters
	sd_slot *slots;
	uint32_t nslots;
	uint32_t free_head;
	int64_t recvs, ops; // posted and not yet completed

	sd_comp *out; // Poll's scratch, read by Go after each call
	int nout;

	int shutdown; // FI_SHUTDOWN (or a connection error) seen on eq
	int eq_err;   // that error's FI_E* code, 0 for a clean shutdown

	// selective: the completion queue is bound with
	// FI_SELECTIVE_COMPLETION for sends, so that a send posted with
	// SD_UNSIGNALED in its id completes silently (its failure still
	// completes, with unsig as context). Every other operation asks for
	// its completion.
	int selective;
	sd_slot unsig;

	// kick and closing end an sd_spin early: kick when Go has receives
	// to post (the spinning reader posts them before it polls again; Go
	// clears it), closing when the endpoint is being closed (never
	// cleared). Both are written by Go with atomic stores.
	uint32_t kick;
	uint32_t closing;
} sd_ep;

// SD_UNSIGNALED in a send span's id asks for no completion (sd_exchange,
// when e->selective).
#define SD_UNSIGNALED (1ULL << 55)

// A passive endpoint.
typedef struct sd_pep {
	sd_fabric *f;
	struct fi_info *info;
	struct fid_pep *pep;
	struct fid_eq *eq;
	int eqfd, wakefd;
} sd_pep;

// An address as Go reads it.
typedef struct sd_addr {
	int family; // 4, 6, or 0 when the format is not an IP socket address
	uint8_t ip[16];
	uint16_t port;
} sd_addr;

int sd_fabric_open(const char *prov, const char *node, int cq_size, sd_fabric **out);
int sd_fabric_close(sd_fabric *f);
int sd_provider_exists(const char *prov);
const char *sd_provider_name(sd_fabric *f);
uint64_t sd_max_msg(sd_fabric *f);

int sd_mr_reg(sd_fabric *f, uintptr_t buf, size_t len, uint64_t req_key,
	struct fid_mr **mr, uintptr_t *desc, uint64_t *key);
int sd_mr_close(struct fid_mr *mr);

int sd_listen(sd_fabric *f, const char *node, const char *service, sd_pep **out);
int sd_pep_getname(sd_pep *p, sd_addr *a);
int sd_pep_accept(sd_pep *p, int timeout_ms, sd_ep **out);
void sd_pep_wake(sd_pep *p);
int sd_pep_close(sd_pep *p);

int sd_dial(sd_fabric *f, const char *node, const char *service, int timeout_ms, sd_ep **out);
int sd_ep_names(sd_ep *e, sd_addr *local, sd_addr *remote);
int sd_post(sd_ep *e, int op, uintptr_t buf, size_t len, uintptr_t desc,
	uint64_t raddr, uint64_t rkey, uint64_t id);
// sd_post_batch returns how many it posted in the low 32 bits and the
// positive error code that stopped it (0 if none) in the high 32 bits.
int64_t sd_post_batch(sd_ep *e, int op, uintptr_t base, uintptr_t desc, sd_span *spans, int n);
int sd_poll(sd_ep *e, int n);
// sd_spin polls as sd_poll does until a completion arrives, budget_ns
// have passed, the peer has gone, or kick or closing is set; it returns
// what the last poll returned.
int sd_spin(sd_ep *e, int n, int64_t budget_ns);
// sd_exchange posts nr receives into rbase, then ns sends from sbase, then
// polls up to npoll completions into e->out (spinning as sd_spin for up
// to spin_ns when it is positive); one call for what a request/response
// step needs. It returns the number of operations posted
// in bits 0-23, the completions read in bits 24-47 and the positive error
// code that stopped it (0 if none) in bits 48-63: an out parameter would
// make Go allocate, and a field of e would race between callers.
int64_t sd_exchange(sd_ep *e, uintptr_t rbase, uintptr_t rdesc, sd_span *r, int nr,
	uintptr_t sbase, uintptr_t sdesc, sd_span *s, int ns, int npoll, int64_t spin_ns);
int sd_wait_prepare(sd_ep *e, int full);
int sd_ep_waitfd(sd_ep *e);
void sd_ep_wake(sd_ep *e);
void sd_ep_counts(sd_ep *e, int64_t *recvs, int64_t *ops);
int sd_ep_close(sd_ep *e);

// sd_noop does nothing: the benchmark of a bare cgo call.
int sd_noop(int x);

#endif
