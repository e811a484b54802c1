package server

import (
	"testing"

	"github.com/simdedge/simdedge/server/internal/enginetest"
)

// testEngine is the engine startTCP serves with. TestMain runs the whole
// suite once per engine, so every end-to-end behaviour is checked on both
// without copies of the tests.
var testEngine = EngineGoroutine

func TestMain(m *testing.M) {
	enginetest.Main(m, func(e string) { testEngine = Engine(e) })
}
