package xds

import (
	"maps"
	"sync"
	"time"
)

// Status is what the client shows of itself: the admin /config and the
// metrics read it.
type Status struct {
	Server    string `yaml:"server"`
	Connected bool   `yaml:"connected"`
	// Versions are the last ACKed version_info per type URL.
	Versions map[string]string `yaml:"versions"`
	// Applied counts configurations applied; Acks and Nacks responses.
	Applied    uint64 `yaml:"applied"`
	Acks       uint64 `yaml:"acks"`
	Nacks      uint64 `yaml:"nacks"`
	Reconnects uint64 `yaml:"reconnects"`
	// LastNack is the last response refused (nil: none yet).
	LastNack *Nack `yaml:"last_nack,omitempty"`
	// Waiting: accepted resources name others that have not arrived
	// (a route configuration, an assignment); nothing is applied until
	// they do.
	Waiting bool `yaml:"waiting"`
}

// Nack is a refused response.
type Nack struct {
	Type    string    `yaml:"type"`
	Version string    `yaml:"version"`
	Error   string    `yaml:"error"`
	At      time.Time `yaml:"at"`
}

// status is the client's Status under a lock.
type status struct {
	mu sync.Mutex
	s  Status
}

func (st *status) update(f func(s *Status)) {
	st.mu.Lock()
	f(&st.s)
	st.mu.Unlock()
}

func (st *status) get() Status {
	st.mu.Lock()
	defer st.mu.Unlock()
	s := st.s
	s.Versions = maps.Clone(st.s.Versions)
	if st.s.LastNack != nil {
		n := *st.s.LastNack
		s.LastNack = &n
	}
	return s
}
