package delivery

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the queue's Prometheus collectors.
type metrics struct {
	outcomes *prometheus.CounterVec
	latency  prometheus.Histogram
}

// newMetrics registers the collectors on reg (nothing when reg is nil).
// depth is read at each scrape. A collector already registered by another
// Queue on the same registry is shared.
func newMetrics(reg prometheus.Registerer, depth func(context.Context) (int64, error)) (*metrics, error) {
	m := &metrics{
		outcomes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "guidepub_webhook_deliveries_total",
			Help: "Webhook attempts by outcome: delivered, retried, dropped, exhausted.",
		}, []string{"outcome"}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "guidepub_webhook_attempt_duration_seconds",
			Help:    "Duration of webhook attempts (request sent to response read or failure).",
			Buckets: prometheus.ExponentialBuckets(0.005, 2.5, 10),
		}),
	}
	for _, o := range []string{"delivered", "retried", "dropped", "exhausted"} {
		m.outcomes.WithLabelValues(o)
	}
	if reg == nil {
		return m, nil
	}
	gauge := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "guidepub_webhook_queue_depth",
		Help: "Webhook deliveries waiting for an attempt (queued or retrying), across all sidecars on the database.",
	}, func() float64 {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		n, err := depth(ctx)
		if err != nil {
			return -1 // the store did not answer; an alert on depth < 0 catches it
		}
		return float64(n)
	})
	var err error
	if m.outcomes, err = register(reg, m.outcomes); err != nil {
		return nil, err
	}
	if m.latency, err = register(reg, m.latency); err != nil {
		return nil, err
	}
	if _, err = register[prometheus.Collector](reg, gauge); err != nil {
		return nil, err
	}
	return m, nil
}

// register registers c, or returns the equal collector already registered.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	err := reg.Register(c)
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	return c, err
}

// attempt counts one attempt that left the delivery in state.
func (m *metrics) attempt(state string, d time.Duration) {
	m.latency.Observe(d.Seconds())
	outcome := state
	if state == StateRetrying {
		outcome = "retried"
	}
	m.outcomes.WithLabelValues(outcome).Inc()
}
