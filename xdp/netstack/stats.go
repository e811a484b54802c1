package netstack

// Stats counts what the stack did with frames. Frames dropped before gVisor
// saw them are the link endpoint's; checksum and segment figures are
// gVisor's own.
type Stats struct {
	// RxFrames counts every frame given to Deliver.
	RxFrames uint64
	// RxNotForUs: destination MAC not the device's.
	RxNotForUs uint64
	// RxBadIPHeader: not IPv4 to the served address, or an IPv4 header
	// that is truncated or fails its checksum (not learnt from).
	RxBadIPHeader uint64
	// RxDropped: not IPv4, too short, or delivered after Close.
	RxDropped uint64
	// TCPChecksumErrors: segments gVisor dropped for a bad TCP checksum
	// (verified in software, see the package comment).
	TCPChecksumErrors uint64
	// TxFrames counts frames Transmit accepted; TxErrors those it refused.
	TxFrames, TxErrors uint64
	// TxNoNeighbor: replies to a peer whose MAC was never learnt (or was
	// evicted); TxTooBig: packets larger than the device's MTU.
	TxNoNeighbor, TxTooBig uint64
	// TxACKsMerged: pure ACKs the link held and dropped because the next
	// segment of the connection carried the acknowledgement (Config.
	// ACKDelay); TxACKsDelayed: held ACKs sent when their delay ran out.
	TxACKsMerged, TxACKsDelayed uint64
	// Neighbors is the size of the learnt IP-to-MAC table.
	Neighbors int
}

// Stats returns the counters so far.
func (s *Stack) Stats() Stats {
	l := &s.link.stats
	return Stats{
		RxFrames:          l.rxFrames.Load(),
		RxNotForUs:        l.rxNotForUs.Load(),
		RxBadIPHeader:     l.rxBadIPHeader.Load(),
		RxDropped:         l.rxDropped.Load(),
		TCPChecksumErrors: s.st.Stats().TCP.ChecksumErrors.Value(),
		TxFrames:          l.txFrames.Load(),
		TxErrors:          l.txErrors.Load(),
		TxNoNeighbor:      l.txNoNeighbor.Load(),
		TxTooBig:          l.txTooBig.Load(),
		TxACKsMerged:      l.txACKsMerged.Load(),
		TxACKsDelayed:     l.txACKsDelayed.Load(),
		Neighbors:         s.link.neigh.len(),
	}
}
