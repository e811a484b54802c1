//go:build !race

package url

const raceEnabled = false
