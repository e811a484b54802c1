//go:build !amd64 || purego || noasm

package asm

// detectLevel: builds without assembly run the pure-Go twins only.
func detectLevel() Level { return Generic }

func detectVBMI2() bool { return false }
