package delivery

import (
	"context"
	"fmt"
	"time"

	"github.com/guidepub/guidepub/sidecar/store"
)

// An attempt whose process died stays "running" in River's table. River
// rescues such jobs only after RescueStuckJobsAfter, on its leader, every
// 30 s once the dead leader's lease has expired: 75 to 108 s were measured.
// guidepub reclaims them itself (docs/delivery.md#crash-recovery):
//
//   - at Start, the jobs a process with the same InstanceID left running
//     are made available at once: that process is this one's predecessor,
//     and it is gone;
//   - every reclaimInterval, on every sidecar, jobs running for longer than
//     RescueAfter (the job's own time limit plus a margin, so a live worker
//     has given up on them) are made available again.
//
// Both are single UPDATE statements, safe to run from several sidecars at
// once. A reclaimed delivery may have reached its receiver before the crash:
// it is sent again with the same webhook-id (at least once).
const reclaimInterval = 5 * time.Second

// reclaimOwn makes the jobs last attempted by instance and still running
// available now. It returns how many.
func (q *Queue) reclaimOwn(ctx context.Context, instance string) (int64, error) {
	if instance == "" {
		return 0, nil
	}
	var query string
	switch q.st.Dialect() {
	case store.Postgres:
		query = `UPDATE river_job SET state = 'available', scheduled_at = now()
			WHERE state = 'running' AND kind = ? AND attempted_by[array_length(attempted_by, 1)] = ?`
	default:
		query = `UPDATE river_job SET state = 'available', scheduled_at = datetime('now', 'subsec')
			WHERE state = 'running' AND kind = ? AND json_extract(CAST(attempted_by AS TEXT), '$[#-1]') = ?`
	}
	n, err := q.st.Exec(ctx, query, jobArgs{}.Kind(), instance)
	if err != nil {
		return 0, fmt.Errorf("reclaim in-flight deliveries of %s: %w", instance, err)
	}
	return n, nil
}

// reclaimStuck makes the jobs running for longer than after available now,
// whoever ran them. It returns how many.
func (q *Queue) reclaimStuck(ctx context.Context, after time.Duration) (int64, error) {
	secs := after.Seconds()
	var query string
	switch q.st.Dialect() {
	case store.Postgres:
		query = `UPDATE river_job SET state = 'available', scheduled_at = now()
			WHERE state = 'running' AND kind = ? AND attempted_at < now() - make_interval(secs => ?)`
	default:
		query = `UPDATE river_job SET state = 'available', scheduled_at = datetime('now', 'subsec')
			WHERE state = 'running' AND kind = ? AND attempted_at < datetime('now', printf('-%f seconds', ?), 'subsec')`
	}
	n, err := q.st.Exec(ctx, query, jobArgs{}.Kind(), secs)
	if err != nil {
		return 0, fmt.Errorf("reclaim stuck deliveries: %w", err)
	}
	return n, nil
}

// reclaimLoop runs reclaimStuck every reclaimInterval until ctx ends.
func (q *Queue) reclaimLoop(ctx context.Context) {
	t := time.NewTicker(reclaimInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		n, err := q.reclaimStuck(ctx, q.cfg.RescueAfter)
		switch {
		case err != nil && ctx.Err() == nil:
			q.cfg.Logger.Warn("reclaiming stuck deliveries failed", "err", err)
		case n > 0:
			q.cfg.Logger.Info("deliveries of a stopped sidecar taken over", "count", n)
		}
	}
}
