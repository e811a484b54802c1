//go:build race

package server

// raceEnabled: the race detector drops sync.Pool items at random, so
// allocation counts are checked without it.
const raceEnabled = true
