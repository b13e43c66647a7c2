package delivery

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestOutcomes(t *testing.T) {
	hang := func(n int, w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}
	closeConn := func(n int, w http.ResponseWriter, r *http.Request) {
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
	}
	cases := []struct {
		name      string
		handle    func(n int, w http.ResponseWriter, r *http.Request)
		timeout   time.Duration
		wantState string
		wantCodes []int    // status of each attempt (0: no response)
		wantErr   []string // substring of each attempt's error ("" none)
	}{
		{"200", status(200), 0, StateDelivered, []int{200}, []string{""}},
		{"204", status(204), 0, StateDelivered, []int{204}, []string{""}},
		{"500 always", status(500), 0, StateExhausted, []int{500, 500, 500}, []string{"500", "500", "500"}},
		{"503 then 200", func(n int, w http.ResponseWriter, r *http.Request) {
			if n == 1 {
				w.WriteHeader(503)
				return
			}
			w.WriteHeader(200)
		}, 0, StateDelivered, []int{503, 200}, []string{"503", ""}},
		{"404", status(404), 0, StateDropped, []int{404}, []string{"dropped"}},
		{"410", status(410), 0, StateDropped, []int{410}, []string{"dropped"}},
		{"hang past timeout", hang, 150 * time.Millisecond, StateExhausted, []int{0, 0, 0}, []string{"no answer within 150ms", "no answer", "no answer"}},
		{"connection closed", closeConn, 0, StateExhausted, []int{0, 0, 0}, []string{"EOF", "EOF", "EOF"}},
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			st := openStore(t, b.dsn(t))
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					rc := newReceiver(t, tc.handle)
					cfg := testConfig()
					if tc.timeout > 0 {
						cfg.Timeout = tc.timeout
					}
					q := startQueue(t, st, cfg)
					guide := "g-" + strings.ReplaceAll(tc.name, " ", "-")
					d := enqueueOne(t, q, message(guide, rc.srv.URL+"/hook", 1))
					if d.State != StateQueued || d.WebhookID == "" || d.ID == "" {
						t.Fatalf("enqueued %+v", d)
					}
					got := waitFinal(t, q, guide, d.ID)
					if got.State != tc.wantState {
						t.Errorf("state %s, want %s (attempts %+v)", got.State, tc.wantState, got.Attempts)
					}
					if len(got.Attempts) != len(tc.wantCodes) {
						t.Fatalf("%d attempts recorded, want %d: %+v", len(got.Attempts), len(tc.wantCodes), got.Attempts)
					}
					reqs := rc.requests()
					if len(reqs) != len(tc.wantCodes) {
						t.Fatalf("receiver got %d requests, want %d", len(reqs), len(tc.wantCodes))
					}
					for i, a := range got.Attempts {
						if a.StatusCode != tc.wantCodes[i] {
							t.Errorf("attempt %d status %d, want %d", i+1, a.StatusCode, tc.wantCodes[i])
						}
						if (tc.wantErr[i] == "") != (a.Error == "") || !strings.Contains(a.Error, tc.wantErr[i]) {
							t.Errorf("attempt %d error %q, want %q", i+1, a.Error, tc.wantErr[i])
						}
					}
					// Retries wait at least the drawn delay (replayed from
					// the seeded source), measured at the receiver.
					delays := expectedDelays(cfg, len(reqs))
					for i := 1; i < len(reqs); i++ {
						gap := reqs[i].at.Sub(reqs[i-1].at)
						if gap < delays[i-1] {
							t.Errorf("attempt %d came %s after the previous one, before its delay %s", i+1, gap, delays[i-1])
						}
					}
					for _, r := range reqs {
						if id := r.header.Get("webhook-id"); id != d.WebhookID {
							t.Errorf("webhook-id %q, want %q on every attempt", id, d.WebhookID)
						}
					}
				})
			}
		})
	}
}

func TestRedirectNotFollowed(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			st := openStore(t, b.dsn(t))
			elsewhere := newReceiver(t, status(200))
			for _, code := range []int{301, 302, 307, 308} {
				t.Run(http.StatusText(code), func(t *testing.T) {
					rc := newReceiver(t, func(_ int, w http.ResponseWriter, r *http.Request) {
						http.Redirect(w, r, elsewhere.srv.URL+"/moved", code)
					})
					q := startQueue(t, st, testConfig())
					d := enqueueOne(t, q, message("g-redirect", rc.srv.URL, code))
					got := waitFinal(t, q, "g-redirect", d.ID)
					if got.State != StateDropped || len(got.Attempts) != 1 || got.Attempts[0].StatusCode != code {
						t.Errorf("got %s with attempts %+v, want dropped after one %d", got.State, got.Attempts, code)
					}
					if n := len(rc.requests()); n != 1 {
						t.Errorf("receiver got %d requests, want 1", n)
					}
				})
			}
			if n := len(elsewhere.requests()); n != 0 {
				t.Errorf("the Location target was hit %d times", n)
			}
		})
	}
}

func status(code int) func(int, http.ResponseWriter, *http.Request) {
	return func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(code) }
}
