package httpadapter

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the HTTP collectors, shared by every API registered on one
// Registerer and told apart by the "api" label.
type metrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

// newMetrics registers the collectors on reg, or reuses the ones a previous
// call registered there. It returns nil for a nil reg and panics, as
// prometheus.MustRegister does, when reg holds incompatible collectors of
// the same names.
func newMetrics(reg prometheus.Registerer) *metrics {
	if reg == nil {
		return nil
	}
	labels := []string{"api", "route", "status"}
	return &metrics{
		requests: registerOrReuse(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "paykit_http_requests_total",
			Help: "HTTP requests served, by API, route pattern and status.",
		}, labels)),
		duration: registerOrReuse(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "paykit_http_request_duration_seconds",
			Help:    "Time to serve HTTP requests, by API, route pattern and status.",
			Buckets: prometheus.DefBuckets,
		}, labels)),
	}
}

func registerOrReuse[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	err := reg.Register(c)
	if err == nil {
		return c
	}
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing
		}
	}
	panic(fmt.Sprintf("httpadapter: register metrics: %v", err))
}

// observe records one request. route is a registered pattern or
// "unmatched", so the label set stays small whatever clients send.
func (m *metrics) observe(api, route string, status int, d time.Duration) {
	code := strconv.Itoa(status)
	m.requests.WithLabelValues(api, route, code).Inc()
	m.duration.WithLabelValues(api, route, code).Observe(d.Seconds())
}
