package router

import (
	"testing"

	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/internal/enginetest"
)

// testEngine serves the tests' kernel TCP listeners; TestMain runs the
// suite once per engine (server/internal/enginetest).
var testEngine = server.EngineGoroutine

func TestMain(m *testing.M) {
	enginetest.Main(m, func(e string) { testEngine = server.Engine(e) })
}
