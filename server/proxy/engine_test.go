package proxy

import (
	"testing"

	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/internal/enginetest"
)

// testEngine serves the tests' kernel TCP listeners; TestMain runs the
// suite once per engine (server/internal/enginetest).
var testEngine = server.EngineGoroutine

// testLoopProxy: the loop proxies itself (server.Options.LoopProxy), the
// "loop-proxy" run.
var testLoopProxy bool

func TestMain(m *testing.M) {
	enginetest.MainProxy(m, func(e string) {
		testLoopProxy = e == enginetest.LoopProxy
		if testLoopProxy {
			e = enginetest.Loop
		}
		testEngine = server.Engine(e)
	})
}
