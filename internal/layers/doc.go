// Package layers holds no code, only a test that enforces the import rules
// of ARCHITECTURE.md: which project packages each layer may import, and
// that comparator and generator dependencies never enter the main go.mod.
package layers
