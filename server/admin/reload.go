package admin

import (
	"context"
	"errors"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
)

// ErrStopping is what Options.Reload returns when the server is draining
// and will not reload any more: POST /reload answers 503.
var ErrStopping = errors.New("admin: the server is stopping")

var (
	descReloadOK = prometheus.NewDesc(namespace+"_config_last_reload_success",
		"1 if the last configuration load (the start, then each reload) was applied, 0 if it was refused.", nil, nil)
	descReloadAt = prometheus.NewDesc(namespace+"_config_last_reload_timestamp_seconds",
		"Unix time of the last configuration load's outcome, applied or refused.", nil, nil)
)

// collectReload publishes the last reload's outcome, once there is one.
func (c *collector) collectReload(ch chan<- prometheus.Metric) {
	applied, at, ok := c.set.Reloads().Last()
	if !ok {
		return
	}
	v := 0.0
	if applied {
		v = 1
	}
	ch <- prometheus.MustNewConstMetric(descReloadOK, prometheus.GaugeValue, v)
	ch <- prometheus.MustNewConstMetric(descReloadAt, prometheus.GaugeValue, float64(at.UnixNano())/1e9)
}

// reload is POST /reload: it reloads the configuration file as SIGHUP
// does, waits for the outcome and answers it: 200 and a summary when the
// reload was applied, 422 and the reason when it was refused (the file
// is invalid, or changes what needs a restart: nothing changed), 503
// while the server stops. It reloads only the file the server was
// started with; the request carries no configuration.
func (a *Admin) reload(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		plain(w, http.StatusMethodNotAllowed, "admin: /reload takes POST\n")
		return
	}
	summary, err := a.o.Reload(r.Context())
	switch {
	case err == nil:
		plain(w, http.StatusOK, "reloaded: "+summary+"\n")
	case errors.Is(err, ErrStopping), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		plain(w, http.StatusServiceUnavailable, "reload not done: "+err.Error()+"\n")
	default:
		// The operator's own file and key names: the same text as the
		// log line of a refused SIGHUP reload.
		plain(w, http.StatusUnprocessableEntity, "reload refused: "+err.Error()+"\n")
	}
}
