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

func TestNeedRDMA(t *testing.T) {
	t.Setenv(RequireRDMA, "")
	ran := false
	t.Run("available", func(t *testing.T) {
		NeedRDMA(t, nil)
		ran = true
	})
	if !ran {
		t.Error("NeedRDMA(nil) stopped the test")
	}
	ran = false
	t.Run("missing", func(t *testing.T) {
		NeedRDMA(t, errTest)
		ran = true
	})
	if ran {
		t.Error("NeedRDMA(err) did not stop the test")
	}
}

var errTest = testError("rdma: no RDMA device or provider")

type testError string

func (e testError) Error() string { return string(e) }
