package xdp

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/simdedge/simdedge/xdp/internal/xsk"
)

// rxBatch is how many descriptors the RX loop takes from the ring at once.
const rxBatch = 64

// kickTries bounds the kicks in a row that send nothing (see kick).
// txWaitTries and txWaitPause bound how long a transmit waits for a
// completed frame, or a TX ring slot, when all are in flight (copy mode
// completes frames inside the kick, so the first retry nearly always
// succeeds).
const (
	kickTries   = 8
	txWaitTries = 50
	txWaitPause = 100 * time.Microsecond
)

// queue is one RX queue's AF_XDP socket. The UMEM's first rxFrames
// frames receive, the rest transmit.
//
// Locks: fillMu serialises the fill ring (the RX loop recycling frames,
// Release returning datagram frames); txMu the TX and completion rings and
// the free list of transmit frames. The RX ring belongs to the RX loop.
// dead, set under both locks by Close, stops every later use of the rings.
type queue struct {
	l    *Listener
	id   int
	sock *xsk.Socket

	fillMu sync.Mutex
	spare  []uint64 // receive frames the fill ring had no room for; fillMu
	txMu   sync.Mutex
	txFree []uint64 // transmit frames not in flight
	comp   []uint64 // completion scratch
	desc   [1]unix.XDPDesc
	dead   bool

	kicking atomic.Bool // a goroutine is in the TX kick (see kick)
	// A PacketConn's frames queued since the last kick, and whether its
	// flusher has this queue to kick (packetconn.go).
	unkicked atomic.Int32
	flushing atomic.Bool

	received, stream, datagrams, dropped, sent, txFull atomic.Uint64
}

// recycle returns received frames to the fill ring. With more receive
// frames than ring entries, those that do not fit wait in spare and go
// first next time.
func (q *queue) recycle(addrs []uint64) {
	if len(addrs) == 0 {
		return
	}
	q.fillMu.Lock()
	if !q.dead {
		if len(q.spare) > 0 {
			q.spare = append(q.spare, addrs...)
			n := q.sock.Fill(q.spare)
			q.spare = q.spare[:copy(q.spare, q.spare[n:])]
		} else if n := q.sock.Fill(addrs); n < len(addrs) {
			q.spare = append(q.spare, addrs[n:]...)
		}
		if q.sock.FillNeedsWakeup() {
			q.sock.WakeRX()
		}
	}
	q.fillMu.Unlock()
}

// rxLoop takes received frames off the RX ring until the socket closes:
// stream frames go to the handler and straight back to the fill ring,
// datagrams to the message listener, which returns them on Release.
func (q *queue) rxLoop(done *sync.WaitGroup) {
	defer done.Done()
	l := q.l
	descs := make([]unix.XDPDesc, rxBatch)
	back := make([]uint64, 0, rxBatch)
	for {
		n := q.sock.Receive(descs)
		if n == 0 {
			if err := q.sock.WaitRX(); err != nil {
				return // closed
			}
			continue
		}
		q.received.Add(uint64(n))
		for _, d := range descs[:n] {
			base := q.sock.Base(d.Addr)
			f, ok := q.sock.Frame(d)
			if !ok || base >= l.rxBytes {
				q.dropped.Add(1) // the kernel never does this; keep the frame out of use
				continue
			}
			kind, start, end := classify(f, l.addr, l.anyAddr, l.tcpPort, l.udpPort)
			switch kind {
			case kindStream:
				if h := l.streamHandler.Load(); h != nil {
					(*h)(f)
					q.stream.Add(1)
				} else {
					q.dropped.Add(1)
				}
			case kindDatagram:
				if l.deliver(q, base, f, start, end) {
					continue // the frame comes back on Release
				}
				q.dropped.Add(1)
			default:
				q.dropped.Add(1)
			}
			back = append(back, base)
		}
		q.recycle(back)
		back = back[:0]
	}
}

// reclaim moves completed transmit frames back to the free list. txMu
// held.
func (q *queue) reclaim() {
	for {
		n := q.sock.Complete(q.comp)
		for _, a := range q.comp[:n] {
			q.txFree = append(q.txFree, q.sock.Base(a))
		}
		if n < len(q.comp) {
			return
		}
	}
}

// allocTX returns a free transmit frame, waiting a bounded time for one to
// complete when all are in flight.
func (q *queue) allocTX() (uint64, error) {
	q.txMu.Lock()
	defer q.txMu.Unlock()
	for try := 0; ; try++ {
		if q.dead {
			return 0, ErrClosed
		}
		if len(q.txFree) == 0 {
			q.reclaim()
		}
		if n := len(q.txFree); n > 0 {
			a := q.txFree[n-1]
			q.txFree = q.txFree[:n-1]
			return a, nil
		}
		if try == txWaitTries {
			q.txFull.Add(1)
			return 0, ErrTXFull
		}
		if err := q.sock.Kick(); err != nil {
			return 0, closedAs(err)
		}
		if try > 0 {
			q.txMu.Unlock()
			if try < 4 {
				runtime.Gosched()
			} else {
				time.Sleep(txWaitPause)
			}
			q.txMu.Lock()
		}
	}
}

// freeTX returns an unsent transmit frame.
func (q *queue) freeTX(a uint64) {
	q.txMu.Lock()
	if !q.dead {
		q.txFree = append(q.txFree, a)
	}
	q.txMu.Unlock()
}

// send queues n bytes of the transmit frame at a and kicks the kernel.
func (q *queue) send(a uint64, n int) error {
	wake, err := q.enqueue(a, n)
	if err != nil || !wake {
		return err
	}
	return q.kick()
}

// enqueue puts n bytes of the transmit frame at a on the TX ring without
// kicking; wake says the kernel sends it only once kicked. On failure the
// frame is back on the free list.
func (q *queue) enqueue(a uint64, n int) (wake bool, err error) {
	q.txMu.Lock()
	if q.dead {
		q.txMu.Unlock()
		return false, ErrClosed
	}
	q.desc[0] = unix.XDPDesc{Addr: a, Len: uint32(n)}
	// With no more transmit frames than TX ring entries this fits at
	// once; otherwise the kernel frees a slot as it sends.
	for try := 0; q.sock.Transmit(q.desc[:]) == 0; try++ {
		var err error
		switch {
		case try == txWaitTries:
			q.txFull.Add(1)
			err = ErrTXFull
		default:
			err = closedAs(q.sock.Kick())
		}
		if err != nil {
			q.txFree = append(q.txFree, a)
			q.txMu.Unlock()
			return false, err
		}
		q.reclaim()
		if try > 0 {
			q.txMu.Unlock()
			time.Sleep(txWaitPause)
			q.txMu.Lock()
			if q.dead {
				q.txMu.Unlock()
				return false, ErrClosed
			}
		}
	}
	q.sent.Add(1)
	// Drain the completion ring before the kick: in copy mode the kernel
	// sends nothing while that ring is full (the kick fails with EAGAIN
	// and the frame would wait in the TX ring for the next one).
	q.reclaim()
	wake = q.sock.TXNeedsWakeup()
	q.txMu.Unlock()
	return wake, nil
}

// kick has the kernel send what the TX ring holds (in copy mode the
// sending happens inside the syscall). Kicks combine: while one goroutine
// is in the syscall, the others leave their frames to it, and it looks at
// the ring again after clearing its flag, so every queued frame is sent
// by some kick and most replies cost no syscall of their own under load.
// It gives up after kickTries kicks in a row that sent nothing (the kernel
// out of room); the next send kicks again.
func (q *queue) kick() error {
	stuck := 0
	for {
		if !q.kicking.CompareAndSwap(false, true) {
			return nil // the kicker will see our frame
		}
		before := q.sock.TXQueued()
		err := closedAs(q.sock.Kick())
		q.kicking.Store(false)
		if err != nil {
			return err
		}
		after := q.sock.TXQueued()
		if after == 0 {
			return nil
		}
		if after >= before {
			if stuck++; stuck == kickTries {
				return nil
			}
			runtime.Gosched()
		} else {
			stuck = 0
		}
		q.txMu.Lock()
		if q.dead {
			q.txMu.Unlock()
			return ErrClosed
		}
		q.reclaim()
		q.txMu.Unlock()
	}
}

// closedAs reports a socket closed under a sender (Close has begun) as the
// package's ErrClosed, the error callers test for.
func closedAs(err error) error {
	if errors.Is(err, os.ErrClosed) {
		return fmt.Errorf("%w: %w", ErrClosed, err)
	}
	return err
}
