package server

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// testEngine is the engine startTCP serves with. TestMain runs the whole
// suite once per engine (SIMDEDGE_TEST_ENGINES=goroutine,loop picks), so
// every end-to-end behaviour is checked on both without copies of the
// tests.
var testEngine = EngineGoroutine

// testEngines lists the engines to run the suite on.
func testEngines() []Engine {
	out := []Engine{EngineGoroutine}
	if LoopSupported {
		out = append(out, EngineLoop)
	}
	if v := os.Getenv("SIMDEDGE_TEST_ENGINES"); v != "" {
		out = out[:0]
		for _, e := range strings.Split(v, ",") {
			if Engine(e) == EngineLoop && !LoopSupported {
				continue
			}
			out = append(out, Engine(e))
		}
	}
	return out
}

func TestMain(m *testing.M) {
	code := 0
	for _, e := range testEngines() {
		testEngine = e
		fmt.Fprintf(os.Stderr, "--- server tests on the %s engine\n", e)
		if code = m.Run(); code != 0 {
			fmt.Fprintf(os.Stderr, "--- FAIL on the %s engine\n", e)
			break
		}
	}
	os.Exit(code)
}
