//go:build linux

package server

import (
	"os"
	"sync/atomic"
	"unsafe"

	"github.com/simdedge/simdedge/server/internal/rbuf"
	"golang.org/x/sys/unix"
)

// lring is a minimal io_uring used by the event loop to batch the reads and
// the writes of one loop turn into one system call each. Readiness stays
// with epoll; the ring replaces the per-connection read(2) calls after
// epoll_wait and the write(2) calls at the end of the turn.
//
// Why: a system call costs ~1.45 µs of entry and exit on the 2-vCPU VM the
// benchmarks run on (a raw getppid loop), about 30 % of the loop's CPU per
// origin request. One io_uring_enter carrying the turn's k sends pays that
// once instead of k times.
//
// Every operation carries MSG_DONTWAIT: io_uring then completes it inline
// (bytes moved, or -EAGAIN) instead of arming its own poll and finishing
// later. So the completions are in the completion ring when io_uring_enter
// returns, the buffers are free again, and the loop never has an operation
// in flight across turns. (A completion that is missing anyway is waited
// for; see submit.)
//
// No SQPOLL (a kernel thread spinning on the ring would burn the CPU the
// benchmark counts), no SINGLE_ISSUER (the loop's goroutine may move between
// threads).
type lring struct {
	fd      int
	sqMem   []byte
	cqMem   []byte // == sqMem with IORING_FEAT_SINGLE_MMAP
	sqeMem  []byte
	sqHead  *uint32
	sqTail  *uint32
	sqMask  uint32
	sqArray []uint32
	sqes    []ringSQE
	cqHead  *uint32
	cqTail  *uint32
	cqMask  uint32
	cqes    []ringCQE
	// pending is the number of SQEs queued since the last submit.
	pending uint32
	entries uint32
}

// The kernel's structures (include/uapi/linux/io_uring.h).
type ringSQE struct {
	opcode   uint8
	flags    uint8
	ioprio   uint16
	fd       int32
	off      uint64
	addr     uint64
	len      uint32
	msgFlags uint32
	userData uint64
	bufIndex uint16
	persona  uint16
	spliceFD int32
	addr3    uint64
	_        uint64
}

type ringCQE struct {
	userData uint64
	res      int32
	flags    uint32
}

type ringSQOffsets struct {
	head, tail, ringMask, ringEntries, flags, dropped, array, resv1 uint32
	userAddr                                                        uint64
}

type ringCQOffsets struct {
	head, tail, ringMask, ringEntries, overflow, cqes, flags, resv1 uint32
	userAddr                                                        uint64
}

type ringParams struct {
	sqEntries, cqEntries, flags, sqThreadCPU, sqThreadIdle, features, wqFD uint32
	resv                                                                   [3]uint32
	sqOff                                                                  ringSQOffsets
	cqOff                                                                  ringCQOffsets
}

const (
	ringOpSend         = 26 // IORING_OP_SEND
	ringOpRecv         = 27 // IORING_OP_RECV
	ringOffSQRing      = 0
	ringOffCQRing      = 0x8000000
	ringOffSQEs        = 0x10000000
	ringFeatSingleMmap = 1 << 0
	ringEnterGetEvents = 1 << 0
	// ringEntries bounds the sends of one submit; a turn with more
	// submits several times.
	ringEntries = 256
)

// ringEnters counts the io_uring_enter calls of every loop (tests check
// that batches went through the ring, or did not).
var ringEnters atomic.Int64

// ringEnv names the environment variable that sets how the loop uses
// io_uring: "off" never (read(2) and write(2) only: an escape hatch for a
// kernel whose io_uring misbehaves), "all" for every read and write, even
// a batch of one (the tests' setting: every path then goes through the
// ring); anything else, the default: batches of two or more.
const ringEnv = "SIMDEDGE_IO_URING"

// ringSetting returns whether to set up a ring and the smallest batch that
// goes through it.
func ringSetting() (on bool, minBatch int) {
	switch os.Getenv(ringEnv) {
	case "off":
		return false, 0
	case "all":
		return true, 1
	}
	return true, 2
}

// newRing sets up a ring, or returns nil where io_uring is unavailable
// (old kernel, seccomp, kernel.io_uring_disabled): the loop then reads and
// writes with read(2) and write(2).
func newRing() *lring {
	var p ringParams
	fd, _, e := unix.RawSyscall(unix.SYS_IO_URING_SETUP, ringEntries, uintptr(unsafe.Pointer(&p)), 0)
	if e != 0 {
		return nil
	}
	r := &lring{fd: int(fd)}
	if !r.mmap(&p) {
		r.close()
		return nil
	}
	return r
}

func (r *lring) mmap(p *ringParams) bool {
	sqSize := int(p.sqOff.array + p.sqEntries*4)
	cqSize := int(p.cqOff.cqes + p.cqEntries*uint32(unsafe.Sizeof(ringCQE{})))
	single := p.features&ringFeatSingleMmap != 0
	if single {
		sqSize = max(sqSize, cqSize)
	}
	var err error
	if r.sqMem, err = unix.Mmap(r.fd, ringOffSQRing, sqSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE); err != nil {
		return false
	}
	r.cqMem = r.sqMem
	if !single {
		if r.cqMem, err = unix.Mmap(r.fd, ringOffCQRing, cqSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE); err != nil {
			r.cqMem = nil
			return false
		}
	}
	sqeSize := int(p.sqEntries) * int(unsafe.Sizeof(ringSQE{}))
	if r.sqeMem, err = unix.Mmap(r.fd, ringOffSQEs, sqeSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE); err != nil {
		return false
	}
	sq, cq := unsafe.Pointer(&r.sqMem[0]), unsafe.Pointer(&r.cqMem[0])
	r.sqHead = (*uint32)(unsafe.Add(sq, p.sqOff.head))
	r.sqTail = (*uint32)(unsafe.Add(sq, p.sqOff.tail))
	r.sqMask = *(*uint32)(unsafe.Add(sq, p.sqOff.ringMask))
	r.sqArray = unsafe.Slice((*uint32)(unsafe.Add(sq, p.sqOff.array)), p.sqEntries)
	r.sqes = unsafe.Slice((*ringSQE)(unsafe.Pointer(&r.sqeMem[0])), p.sqEntries)
	r.cqHead = (*uint32)(unsafe.Add(cq, p.cqOff.head))
	r.cqTail = (*uint32)(unsafe.Add(cq, p.cqOff.tail))
	r.cqMask = *(*uint32)(unsafe.Add(cq, p.cqOff.ringMask))
	r.cqes = unsafe.Slice((*ringCQE)(unsafe.Add(cq, p.cqOff.cqes)), p.cqEntries)
	r.entries = p.sqEntries
	return true
}

func (r *lring) close() {
	if r.sqeMem != nil {
		unix.Munmap(r.sqeMem)
	}
	if r.cqMem != nil && (r.sqMem == nil || &r.cqMem[0] != &r.sqMem[0]) {
		unix.Munmap(r.cqMem)
	}
	if r.sqMem != nil {
		unix.Munmap(r.sqMem)
	}
	r.sqeMem, r.cqMem, r.sqMem = nil, nil, nil
	if r.fd >= 0 {
		unix.Close(r.fd)
		r.fd = -1
	}
}

// op queues a send or recv (opcode) of p on fd, tagged with tag. p must
// not be empty and must stay untouched until submit returns.
func (r *lring) op(opcode uint8, fd int, p []byte, tag uint64) {
	tail := *r.sqTail // only this goroutine writes the tail
	i := tail & r.sqMask
	r.sqes[i] = ringSQE{
		opcode:   opcode,
		fd:       int32(fd),
		addr:     uint64(uintptr(unsafe.Pointer(&p[0]))),
		len:      uint32(len(p)),
		msgFlags: unix.MSG_DONTWAIT | unix.MSG_NOSIGNAL,
		userData: tag,
	}
	r.sqArray[i] = i
	atomic.StoreUint32(r.sqTail, tail+1) // publishes the SQE to the kernel
	r.pending++
}

// submit hands the queued sends to the kernel and calls done for each
// completion (res: bytes sent, or -errno). It returns false if the ring
// failed (the caller falls back to write(2) for good).
func (r *lring) submit(done func(tag uint64, res int32)) bool {
	want := r.pending
	r.pending = 0
	if want == 0 {
		return true
	}
	for left, tries := want, 0; left > 0; tries++ {
		if tries == 4 {
			return false
		}
		ringEnters.Add(1)
		n, _, e := unix.RawSyscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(left), 0, 0, 0, 0)
		if e != 0 && e != unix.EINTR {
			return false
		}
		left -= min(uint32(n), left)
	}
	got := r.reap(done)
	for got < want {
		// Not expected with MSG_DONTWAIT (see lring); wait rather
		// than let a buffer be reused under the kernel. The
		// ordinary Syscall path: this one may block.
		_, _, e := unix.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), 0, uintptr(want-got), ringEnterGetEvents, 0, 0)
		if e != 0 && e != unix.EINTR {
			return false
		}
		got += r.reap(done)
	}
	return true
}

func (r *lring) reap(done func(tag uint64, res int32)) uint32 {
	head := *r.cqHead
	tail := atomic.LoadUint32(r.cqTail)
	n := tail - head
	for ; head != tail; head++ {
		c := r.cqes[head&r.cqMask]
		done(c.userData, c.res)
	}
	atomic.StoreUint32(r.cqHead, head)
	return n
}

// The loop's side (ringJob, prefetch, writeSoon, flush). A turn is: epoll
// reports k ready descriptors; prefetch reads every one the dispatch would
// read, in one io_uring_enter, leaving each result on its connection, where
// read and upRead find it instead of calling read(2); the dispatch parses,
// answers and proxies as before, but output that can wait (writeSoon,
// upSendSoon) is queued; flush sends the queue in one io_uring_enter and
// runs each connection through write or upSend, which find their output
// sent (no system call) or finish a partial send the ordinary way (EAGAIN:
// EPOLLOUT and back-pressure, as before). So a turn costs three system
// calls instead of 2k+1. A batch of one uses read(2)/write(2): an
// io_uring_enter for one operation costs more.

// ringJob is one operation of a submit: on a client connection or an
// upstream connection.
type ringJob struct {
	lc  *lconn
	u   *lupconn
	res int32
	got bool
}

// ringResult is a prefetched read: n bytes, or -errno.
type ringResult struct {
	res int32
	got bool
}

// take returns the prefetched read as rawRead would, and clears it.
func (r *ringResult) take() (int, error) {
	res := r.res
	*r = ringResult{}
	if res < 0 {
		return 0, unix.Errno(-res)
	}
	return int(res), nil
}

// prefetch reads, through the ring, the descriptors among evs whose
// dispatch would read them.
func (lp *loop) prefetch(evs []unix.EpollEvent) {
	const readable = unix.EPOLLIN | unix.EPOLLERR | unix.EPOLLHUP
	jobs := lp.jobs[:0]
	for i := range evs {
		if len(jobs) == int(lp.ring.entries) {
			break // the rest read on their own
		}
		fd := int(evs[i].Fd)
		if evs[i].Events&readable == 0 || fd == lp.wfd || fd == lp.lfd {
			continue
		}
		if fd < len(lp.conns) && lp.conns[fd] != nil {
			// The conditions of event's read.
			lc := lp.conns[fd]
			if lc.parked {
				lp.unpark(lc) // bytes arrived
			}
			if c := lc.c; !lc.writing && !lc.ex.active && (c.w < len(c.rbuf) || lc.tls != nil) {
				jobs = append(jobs, ringJob{lc: lc})
			}
		} else if fd < len(lp.ups) && lp.ups[fd] != nil {
			// The conditions of upEvent's upRead.
			if u := lp.ups[fd]; u.lc != nil && !u.connecting && !u.outReg {
				jobs = append(jobs, ringJob{u: u})
			}
		}
	}
	lp.jobs = jobs
	if len(jobs) < lp.ringMin {
		return
	}
	for i := range jobs {
		if lc := jobs[i].lc; lc != nil {
			lp.ring.op(ringOpRecv, lc.fd, lc.recvBuf(), uint64(i))
		} else {
			u := jobs[i].u
			u.buf, u.w = rbuf.Compact(u.buf, u.r, u.w)
			u.r = 0
			lp.ring.op(ringOpRecv, u.fd, u.buf[u.w:], uint64(i))
		}
	}
	ok := lp.ring.submit(lp.doneFn)
	for i := range jobs {
		j := &jobs[i]
		if j.got {
			r := ringResult{res: j.res, got: true}
			if j.lc != nil {
				j.lc.rd = r
			} else {
				j.u.rd = r
			}
		}
	}
	lp.endJobs(ok)
}

// done is the ring's completion callback (bound once as lp.doneFn).
func (lp *loop) done(tag uint64, res int32) {
	if tag < uint64(len(lp.jobs)) {
		lp.jobs[tag].res, lp.jobs[tag].got = res, true
	}
}

func (lp *loop) endJobs(ok bool) {
	clear(lp.jobs)
	lp.jobs = lp.jobs[:0]
	if !ok {
		lp.srv.opts.Logger.Warn("event loop: io_uring failed; using read(2) and write(2)")
		lp.ring.close()
		lp.ring = nil
	}
}

// writeSoon is write for a connection whose output may wait until the end
// of the turn. Without a ring, or with nothing to send, it is write.
func (lp *loop) writeSoon(lc *lconn, now int64) {
	if lp.ring == nil || lc.writing || lc.wpos >= len(lc.c.out) {
		lp.write(lc, now)
		return
	}
	if !lc.queued {
		lc.queued = true
		lp.flushq = append(lp.flushq, ringJob{lc: lc})
	}
}

// upSendSoon is upSend for a request that may wait until the end of the
// turn.
func (lp *loop) upSendSoon(lc *lconn, now int64) {
	u := lc.ex.u
	if lp.ring == nil || u.outReg || u.wpos >= len(u.out) {
		lp.upSend(lc, now)
		return
	}
	ex := lc.ex
	lp.exDeadline(ex, now, ex.pool.header)
	if !u.queued {
		u.queued = true
		lp.flushq = append(lp.flushq, ringJob{u: u})
	}
}

// flush sends the queued output. Finishing a send can queue more (an
// exchange that failed is retried on another connection, or ends and lets
// the next pipelined request run), so it repeats until the queue is empty.
func (lp *loop) flush(now int64) {
	for len(lp.flushq) > 0 && lp.ring != nil {
		q := lp.flushq
		lp.flushq = lp.flushq2[:0]
		jobs := lp.jobs[:0]
		for i, j := range q {
			if len(jobs) == int(lp.ring.entries) {
				// The ring is full: the rest go next round.
				lp.flushq = append(lp.flushq, q[i:]...)
				break
			}
			if lc := j.lc; lc != nil {
				if !lc.queued {
					continue // closed or handed off since (maybe reused)
				}
				lc.queued = false
				if !lc.writing && lc.wpos < len(lc.c.out) {
					jobs = append(jobs, j)
				}
			} else if u := j.u; u.queued {
				u.queued = false
				if u.fd >= 0 && u.lc != nil && u.lc.ex.u == u && !u.connecting && !u.outReg && u.wpos < len(u.out) {
					jobs = append(jobs, j)
				}
			}
		}
		clear(q)
		lp.flushq2 = q[:0]
		lp.jobs = jobs
		lp.sendJobs(now)
	}
	if lp.ring == nil {
		lp.flushSync(now)
	}
}

// sendJobs sends lp.jobs (through the ring when there are several) and
// finishes each.
func (lp *loop) sendJobs(now int64) {
	jobs := lp.jobs
	ok := true
	if len(jobs) >= lp.ringMin {
		for i := range jobs {
			if lc := jobs[i].lc; lc != nil {
				lp.ring.op(ringOpSend, lc.fd, lc.outBytes(), uint64(i))
			} else {
				u := jobs[i].u
				lp.ring.op(ringOpSend, u.fd, u.out[u.wpos:], uint64(i))
			}
		}
		ok = lp.ring.submit(lp.doneFn)
	}
	// Finishing may queue more jobs (lp.flushq) and reuse lp.jobs'
	// array: work on a copy of the results.
	lp.jobs = nil
	for i := range jobs {
		j := jobs[i]
		jobs[i] = ringJob{}
		if lc := j.lc; lc != nil {
			if lc.c == nil {
				continue // closed by an earlier job's ending
			}
			if j.got {
				switch res := j.res; {
				case res > 0:
					lc.wrote(int(res))
				case res == -int32(unix.EAGAIN) || res == -int32(unix.EINTR):
				default:
					// An error, or 0 bytes for a non-empty
					// send: broken, as write would find.
					lp.closeConn(lc)
					continue
				}
			}
			// Nothing left (no system call), the rest of a
			// partial send, or EAGAIN: EPOLLOUT as before.
			if !lp.write(lc, now) && lc.c != nil && lc.writing && lc.ex.active {
				lp.pauseUp(lc)
			}
			continue
		}
		u := j.u
		lc := u.lc
		if u.fd < 0 || lc == nil || lc.ex.u != u {
			continue // the exchange ended meanwhile
		}
		if j.got {
			switch res := j.res; {
			case res > 0:
				u.wpos += int(res)
			case res == -int32(unix.EAGAIN) || res == -int32(unix.EINTR):
			default:
				err := error(unix.EPIPE)
				if res < 0 {
					err = unix.Errno(-res)
				}
				lp.upFailed(lc, err, now)
				continue
			}
		}
		lp.upSend(lc, now)
	}
	lp.jobs = jobs[:0]
	if !ok {
		lp.endJobs(false)
	}
}

// flushSync finishes the queue with write(2) once the ring failed.
func (lp *loop) flushSync(now int64) {
	for len(lp.flushq) > 0 {
		q := lp.flushq
		lp.flushq = nil
		for _, j := range q {
			if lc := j.lc; lc != nil && lc.queued {
				lc.queued = false
				if !lp.write(lc, now) && lc.c != nil && lc.writing && lc.ex.active {
					lp.pauseUp(lc)
				}
			} else if u := j.u; u != nil && u.queued {
				u.queued = false
				if u.fd >= 0 && u.lc != nil && u.lc.ex.u == u {
					lp.upSend(u.lc, now)
				}
			}
		}
	}
}
