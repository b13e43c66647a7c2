package delivery

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// TestRecorderGroupCommit writes many attempts at once: every writer gets
// its own result, every attempt is stored once, and they share transactions.
func TestRecorderGroupCommit(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			st := openStore(t, b.dsn(t))
			q, err := New(st, testConfig())
			if err != nil {
				t.Fatal(err)
			}
			const n = 300
			var msgs []Message
			for i := range n {
				msgs = append(msgs, message("g-rec", fmt.Sprintf("https://example.com/%d", i), i))
			}
			ds, err := q.Enqueue(context.Background(), msgs)
			if err != nil {
				t.Fatal(err)
			}
			at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
			var wg sync.WaitGroup
			errs := make([]error, n)
			for i, d := range ds {
				wg.Add(1)
				go func() {
					defer wg.Done()
					state := StateDelivered
					if i%3 == 0 {
						state = StateRetrying
					}
					errs[i] = q.recorder.write(context.Background(), &record{
						deliveryID: d.ID, at: at.Add(time.Duration(i) * time.Millisecond), status: 200 + i%3,
						errText: fmt.Sprint("e", i), duration: time.Duration(i) * time.Millisecond, state: state, updatedAt: at,
					})
				}()
			}
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Fatalf("write %d: %v", i, err)
				}
			}
			got, err := q.Deliveries(context.Background(), "g-rec")
			if err != nil {
				t.Fatal(err)
			}
			byID := map[string]Delivery{}
			for _, d := range got {
				byID[d.ID] = d
			}
			for i, d := range ds {
				g := byID[d.ID]
				wantState := StateDelivered
				if i%3 == 0 {
					wantState = StateRetrying
				}
				if g.State != wantState || len(g.Attempts) != 1 {
					t.Fatalf("delivery %d: %s with %d attempts", i, g.State, len(g.Attempts))
				}
				a := g.Attempts[0]
				if a.StatusCode != 200+i%3 || a.Error != fmt.Sprint("e", i) || a.DurationMS != int64(i) || !a.At.Equal(at.Add(time.Duration(i)*time.Millisecond)) {
					t.Errorf("delivery %d attempt %+v", i, a)
				}
			}
			if batches := q.recorder.batches.Load(); batches >= n {
				t.Errorf("%d transactions for %d records: no group commit", batches, n)
			} else {
				t.Logf("%d records in %d transactions", n, batches)
			}
			// A second attempt of the same delivery is numbered after the first.
			if err := q.recorder.write(context.Background(), &record{deliveryID: ds[0].ID, at: at.Add(time.Hour), state: StateDelivered, updatedAt: at}); err != nil {
				t.Fatal(err)
			}
			d, _ := q.Delivery(context.Background(), "g-rec", ds[0].ID)
			if len(d.Attempts) != 2 || !d.Attempts[1].At.Equal(at.Add(time.Hour)) {
				t.Errorf("second attempt: %+v", d.Attempts)
			}
		})
	}
}
