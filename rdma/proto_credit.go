package rdma

// Credit-based flow control. A connected endpoint may send a message only
// into a receive buffer the peer has posted; with FI_EP_MSG a message that
// finds none is an error (verbs: receiver-not-ready), so each side counts
// the peer's posted buffers as credits and spends one per message.
//
// Credits come back as the receiver re-posts buffers: piggy-backed on every
// message it sends (header.credits), and by an explicit kindCredit message
// when they pile up with nothing to ride on. The last credit is kept for
// such control messages (credit updates, rendezvous done, errors): data
// (requests, responses, adverts) needs two. Without that reserve both
// sides could spend their last credit on data while holding the other's
// grants, and wait for each other forever.
//
// Start: the client posts its buffers, then sends a kindCredit "hello"
// granting all of them; the server guarantees one posted buffer for it.
// The server answers with a kindCredit granting all of its buffers (the
// hello's buffer re-posted included). After that the rules below hold
// symmetrically.
//
// When to send an explicit update (needUpdate):
//   - pending >= updateAt (half the window, at least 2): a streaming
//     receiver returns credits in batches, not per message;
//   - the peer is down to its reserve (fewer than 2 credits as far as this
//     side knows) and at least one re-posted buffer held a data message.
//
// Buffers consumed by credit updates are granted back only with the next
// message that goes anyway, or once updateAt is reached. With updateAt >= 2
// and every message granting all of pending, an update can provoke at most
// one update back: no ping-pong. And there is no deadlock: a side stuck
// below 2 credits while the peer holds no buffer means the peer has at
// least window-1 >= updateAt buffers pending, so the peer sends an update.
// This is why the window is at least minCredits.

// minCredits is the smallest window: the reserve, two data messages in
// flight, and room for updateAt <= window-2.
const minCredits = 4

// maxCredits bounds a window and the total credits a peer may grant: a
// peer granting more than it could have buffers for breaks the protocol.
const maxCredits = 1 << 16

// window is one connection's credit state. It is not safe for concurrent
// use: the connection's mutex guards it.
type window struct {
	// credits are the messages this side may still send.
	credits int
	// pending are buffers re-posted and not yet granted to the peer;
	// pendingData those of them that had held a message other than a
	// credit update.
	pending, pendingData int
	// granted counts all credits given to the peer (the implicit hello
	// credit included), received all messages taken from it: their
	// difference is what the peer may still send, as far as this side
	// knows.
	granted, received uint64
	// updateAt is the pending count that triggers an explicit update.
	updateAt int
}

// newServerWindow: posted buffers, one of them implicitly promised to the
// client's hello.
func newServerWindow(posted int) window {
	return window{pending: posted - 1, granted: 1, updateAt: updateAt(posted)}
}

// newClientWindow: posted buffers, all granted by the hello; one credit at
// the server for the hello itself.
func newClientWindow(posted int) window {
	return window{credits: 1, pending: posted, updateAt: updateAt(posted)}
}

func updateAt(posted int) int { return max(2, posted/2) }

// canSend reports whether a message may go now: control messages may use
// the reserved last credit, data may not.
func (w *window) canSend(control bool) bool {
	if control {
		return w.credits >= 1
	}
	return w.credits >= 2
}

// spend takes a credit for a message about to be sent and returns the
// grant to write into its header: everything pending.
func (w *window) spend() uint32 {
	w.take()
	return w.grant()
}

// take reserves a credit for a message that is sent later (its payload is
// copied first); grant then returns the credits to write into its header,
// taken at the last moment so that they include everything re-posted
// meanwhile.
func (w *window) take() { w.credits-- }

func (w *window) grant() uint32 {
	g := w.pending
	w.pending, w.pendingData = 0, 0
	w.granted += uint64(g)
	return uint32(g)
}

// received accounts for a message from the peer carrying grant credits.
func (w *window) receive(grant uint32) error {
	w.received++
	if w.received > w.granted {
		// The peer sent into a buffer it had no credit for.
		return protoErr(ErrCredits)
	}
	if uint64(w.credits)+uint64(grant) > maxCredits {
		return protoErr(ErrCredits)
	}
	w.credits += int(grant)
	return nil
}

// reposted accounts for a receive buffer posted again; update says that
// it had held a credit update.
func (w *window) reposted(update bool) {
	w.pending++
	if !update {
		w.pendingData++
	}
}

// peerCredits is what the peer may still send, as far as this side knows.
func (w *window) peerCredits() int { return int(w.granted - w.received) }

// needUpdate reports whether an explicit credit update should go now.
func (w *window) needUpdate() bool {
	return w.pending >= w.updateAt || w.pendingData >= 1 && w.peerCredits() < 2
}
