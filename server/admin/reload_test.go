package admin

import (
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/simdedge/simdedge/server/metrics"
)

// TestReloadEndpoint: POST /reload answers the outcome Options.Reload
// gives (200 applied, 422 refused, 503 stopping); other methods get 405;
// without Options.Reload there is no endpoint.
func TestReloadEndpoint(t *testing.T) {
	var next error
	calls := 0
	a := New(Options{Reload: func(context.Context) (string, error) {
		calls++
		return "1 listener, 2 routes, 0 upstreams", next
	}})
	do := func(method string) (int, string) {
		w := httptest.NewRecorder()
		a.Handler().ServeHTTP(w, httptest.NewRequest(method, "/reload", nil))
		b, _ := io.ReadAll(w.Result().Body)
		return w.Code, string(b)
	}
	if code, body := do("POST"); code != 200 || body != "reloaded: 1 listener, 2 routes, 0 upstreams\n" {
		t.Errorf("applied: %d %q", code, body)
	}
	next = errors.New("proxy_on_loop: cannot be changed by a reload")
	if code, body := do("POST"); code != 422 || !strings.Contains(body, "reload refused: proxy_on_loop") {
		t.Errorf("refused: %d %q", code, body)
	}
	next = ErrStopping
	if code, _ := do("POST"); code != 503 {
		t.Errorf("stopping: %d", code)
	}
	if code, _ := do("GET"); code != 405 || calls != 3 {
		t.Errorf("GET: %d, reload called %d times, want 3", code, calls)
	}
	w := httptest.NewRecorder()
	New(Options{}).Handler().ServeHTTP(w, httptest.NewRequest("POST", "/reload", nil))
	if w.Code != 404 {
		t.Errorf("without Reload: %d", w.Code)
	}
}

// TestReloadMetrics: the last outcome and its time are published under
// Prometheus' own names once one is recorded, and nothing before.
func TestReloadMetrics(t *testing.T) {
	set := metrics.NewSet()
	c := &collector{set: set}
	if n := testutil.CollectAndCount(c, "simdedge_config_last_reload_success", "simdedge_config_last_reload_timestamp_seconds"); n != 0 {
		t.Errorf("%d series before any load", n)
	}
	set.Reloads().Record(true, time.Unix(1700000000, 0))
	set.Reloads().Record(false, time.Unix(1700000100, 0))
	want := `
# HELP simdedge_config_last_reload_success 1 if the last configuration load (the start, then each reload) was applied, 0 if it was refused.
# TYPE simdedge_config_last_reload_success gauge
simdedge_config_last_reload_success 0
# HELP simdedge_config_last_reload_timestamp_seconds Unix time of the last configuration load's outcome, applied or refused.
# TYPE simdedge_config_last_reload_timestamp_seconds gauge
simdedge_config_last_reload_timestamp_seconds 1.7000001e+09
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), "simdedge_config_last_reload_success", "simdedge_config_last_reload_timestamp_seconds"); err != nil {
		t.Error(err)
	}
	set.Reloads().Record(true, time.Unix(1700000200, 0))
	if applied, at, ok := set.Reloads().Last(); !ok || !applied || at.Unix() != 1700000200 {
		t.Errorf("Last = %v %v %v", applied, at, ok)
	}
}
