//go:build race

package url

// raceEnabled: the race detector makes sync.Pool drop a share of what is
// put back, so the counts of tests whose scratch comes from a pool (Parse's
// and CanParse's record) mean nothing under it.
const raceEnabled = true
