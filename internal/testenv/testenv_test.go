package testenv

import (
	"testing"
)

func TestRequired(t *testing.T) {
	t.Setenv("REQUIRE_X_TEST", "")
	if Required("REQUIRE_X_TEST") {
		t.Error("empty variable counted as required")
	}
	t.Setenv("REQUIRE_X_TEST", "0")
	if Required("REQUIRE_X_TEST") {
		t.Error(`"0" counted as required`)
	}
	t.Setenv("REQUIRE_X_TEST", "1")
	if !Required("REQUIRE_X_TEST") {
		t.Error(`"1" not counted as required`)
	}
}

func TestNeedSkips(t *testing.T) {
	t.Setenv("REQUIRE_X_TEST", "")
	ran := false
	t.Run("inner", func(t *testing.T) {
		Need(t, "REQUIRE_X_TEST", false, "capability absent")
		ran = true
	})
	if ran {
		t.Error("Need did not stop the test")
	}
}
