// Command _gen generates simdedge's amd64 SIMD kernels with avo.
//
// It writes one assembly file and one Go stub file per kernel family:
//
//	go run . -kernel classify -pkg asm -out ../classify_amd64.s -stubs ../classify_amd64.go
//
// The asm package's go:generate lines run it for every family, and `make
// generate-check` regenerates into a scratch directory and diffs, so the
// committed files always match this program. It lives in its own module so
// that users of simdedge never depend on avo.
package main

import (
	"flag"
	"fmt"
	"os"

	. "github.com/mmcloughlin/avo/build"
)

// Constraint is the build constraint of every generated file. The asm
// package's hand-written dispatch_amd64.go carries the same expression and
// dispatch_other.go its exact complement; a test in the asm package checks
// all three agree.
//
// avo takes it in the old "+build" syntax, where a comma means "and".
const buildConstraint = "!purego,!noasm"

var family = flag.String("kernel", "", "kernel family to generate: classify, prefixsum, scan, lower, utf8 or jsonindex")

func main() {
	flag.Parse()
	ConstraintExpr(buildConstraint)
	switch *family {
	case "classify":
		classifyAVX2()
		classifyAVX512()
	case "prefixsum":
		prefixSumData()
		for _, w := range laneWidths {
			for _, excl := range []bool{false, true} {
				prefixSumAVX2(w, excl)
				prefixSumAVX512(w, excl)
			}
		}
	case "scan":
		tbl := tabNewlineTable()
		tabNewlineAVX2(tbl)
		tabNewlineAVX512(tbl)
		notInRangeAVX2()
		notInRangeAVX512()
	case "lower":
		toLowerAVX2()
		toLowerAVX512()
	case "utf8":
		tabs, inc32, inc64, tailMask := utf8Data()
		validUTF8AVX2(tabs, inc32, tailMask, utf8ConstData())
		validUTF8AVX512(tabs, inc64)
	case "jsonindex":
		space, op := jsonLookups()
		jsonIndexAVX512(space, op, false)
		jsonIndexAVX512(space, op, true)
		jsonIndexAVX2(space, op)
	default:
		fmt.Fprintf(os.Stderr, "_gen: unknown -kernel %q\n", *family)
		os.Exit(2)
	}
	Generate()
}
