package discover

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/simdedge/simdedge/server/upstream"
)

// Watcher keeps one upstream's names resolved: Resolve once (at build),
// then Start re-resolves them when the answer's refresh time comes and
// calls its onChange when the set of targets (address or weight) changed.
// A failed or empty lookup keeps the last answer (nginx and Envoy do the
// same) and is tried again after the interval. Safe for concurrent use.
type Watcher struct {
	res   *Resolver
	names []Name
	log   *slog.Logger

	mu      sync.Mutex
	cur     []upstream.TargetSpec
	next    time.Duration
	stop    chan struct{}
	done    chan struct{}
	changes uint64
}

// NewWatcher returns a watcher of names through res.
func NewWatcher(res *Resolver, names []Name, log *slog.Logger) *Watcher {
	if log == nil {
		log = slog.Default()
	}
	return &Watcher{res: res, names: names, log: log}
}

// Names are the watched names.
func (w *Watcher) Names() []Name { return w.names }

// Resolver is the watcher's resolver.
func (w *Watcher) Resolver() *Resolver { return w.res }

// Resolve looks the names up now and makes the answer current; it fails
// only when there was no answer before (a build needs targets).
func (w *Watcher) Resolve(ctx context.Context) error {
	t, next, err := w.res.Resolve(ctx, w.names)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.next = next
	if err != nil {
		if w.cur == nil {
			return err
		}
		w.log.Warn("service discovery failed; keeping the last answer", "names", w.names, "err", err)
		return nil
	}
	if w.cur != nil && !sameTargets(w.cur, t) {
		w.changes++
	}
	w.cur = t
	return nil
}

// Targets returns the current answer (a copy).
func (w *Watcher) Targets() []upstream.TargetSpec {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.cur)
}

// Start runs the refresh loop on a goroutine until Stop, calling onChange
// (on that goroutine; it may block: the next lookup waits) after an
// answer that changed the targets. A second Start while running does
// nothing.
func (w *Watcher) Start(onChange func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stop != nil {
		return
	}
	w.stop, w.done = make(chan struct{}), make(chan struct{})
	go w.run(w.stop, w.done, onChange)
}

// Stop ends the refresh loop and waits for it.
func (w *Watcher) Stop() {
	w.mu.Lock()
	stop, done := w.stop, w.done
	w.stop, w.done = nil, nil
	w.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
}

func (w *Watcher) run(stop, done chan struct{}, onChange func()) {
	defer close(done)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-stop:
			cancel()
		case <-done:
		}
	}()
	for {
		w.mu.Lock()
		wait, before := w.next, w.changes
		w.mu.Unlock()
		t := time.NewTimer(wait)
		select {
		case <-stop:
			t.Stop()
			return
		case <-t.C:
		}
		w.Resolve(ctx)
		w.mu.Lock()
		changed := w.changes != before
		w.mu.Unlock()
		if changed && ctx.Err() == nil && onChange != nil {
			w.log.Info("service discovery: targets changed", "names", w.names, "targets", len(w.Targets()))
			onChange()
		}
	}
}

// sameTargets compares two answers as sets.
func sameTargets(a, b []upstream.TargetSpec) bool {
	if len(a) != len(b) {
		return false
	}
	key := func(s []upstream.TargetSpec) []upstream.TargetSpec {
		s = slices.Clone(s)
		slices.SortFunc(s, func(x, y upstream.TargetSpec) int { return strings.Compare(x.Address, y.Address) })
		return s
	}
	return slices.Equal(key(a), key(b))
}

// Same reports whether w watches the same names through a resolver with
// the same options as o, so a rebuild may keep w (and its answer).
func (w *Watcher) Same(names []Name, o Options) bool {
	return slices.Equal(w.names, names) && sameOptions(w.res.o, New(o).o)
}

func sameOptions(a, b Options) bool {
	return slices.Equal(a.Servers, b.Servers) && a.Interval == b.Interval && a.RespectTTL == b.RespectTTL &&
		a.Timeout == b.Timeout && a.Family == b.Family
}
