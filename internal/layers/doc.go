// Package layers holds no code, only tests: they enforce the import rules
// of ARCHITECTURE.md (which project packages each layer may import, and
// that comparator and generator dependencies never enter the main go.mod),
// and keep ARCHITECTURE.md a true map: its layer table is the rules table,
// and every file, Go name and link it names exists (docs_test.go).
package layers
