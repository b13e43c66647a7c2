package publish

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// liveMetrics are Live's Prometheus metrics.
type liveMetrics struct {
	pendingObjects prometheus.Gauge
	uploads        prometheus.Counter
	deletes        prometheus.Counter
	failures       *prometheus.CounterVec
}

func newLiveMetrics(reg prometheus.Registerer, l *Live) *liveMetrics {
	m := &liveMetrics{
		pendingObjects: prometheus.NewGauge(prometheus.GaugeOpts{Name: "guidepub_publish_pending_objects",
			Help: "Public files exported but not yet in the bucket."}),
		uploads: prometheus.NewCounter(prometheus.CounterOpts{Name: "guidepub_publish_uploads_total",
			Help: "Objects uploaded by live publishing."}),
		deletes: prometheus.NewCounter(prometheus.CounterOpts{Name: "guidepub_publish_deletes_total",
			Help: "Objects deleted by live publishing."}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "guidepub_publish_failures_total",
			Help: "Failed guide uploads by kind (transient: retried; permanent: the store refuses, also retried)."}, []string{"kind"}),
	}
	m.failures.WithLabelValues("transient")
	m.failures.WithLabelValues("permanent")
	n := 0
	for _, g := range l.pending {
		n += len(g.files)
	}
	m.pendingObjects.Set(float64(n))
	if reg != nil {
		oldest := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "guidepub_publish_oldest_pending_seconds",
			Help: "Age of the oldest change not yet in the bucket (publish lag); 0 when none."}, l.oldestPendingSeconds)
		reg.MustRegister(m.pendingObjects, m.uploads, m.deletes, m.failures, oldest)
	}
	return m
}

// oldestPendingSeconds is the age of the oldest pending guide.
func (l *Live) oldestPendingSeconds() float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	var oldest time.Time
	for _, g := range l.pending {
		if oldest.IsZero() || g.since.Before(oldest) {
			oldest = g.since
		}
	}
	if oldest.IsZero() {
		return 0
	}
	return l.clock.Now().Sub(oldest).Seconds()
}
