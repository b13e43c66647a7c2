package sidecar

import (
	"net/http"
	"testing"
	"time"

	"github.com/guidepub/guidepub/sidecar/apitoken"
	"github.com/guidepub/guidepub/sidecar/delivery"
)

const deliveriesPath = "/api/v1/guides/" + guideReady + "/events/deliveries"

func TestDeliveriesListAndRetry(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		e := newEnv(t, dsn, nil)
		e.hooks.setStatus(http.StatusBadRequest) // dropped at once, no retry
		e.startQueue()
		alice := e.newCred("alice", apitoken.ScopeEvents)

		var list deliveriesResponse
		decode(t, e.do("GET", deliveriesPath, &alice, nil), &list)
		if list.Deliveries == nil || len(list.Deliveries) != 0 {
			t.Fatalf("before any dispatch: %+v", list.Deliveries)
		}
		if w := e.do("POST", dispatchPath, &alice, nil); w.Code != http.StatusAccepted {
			t.Fatalf("dispatch: %d %s", w.Code, w.Body)
		}
		list = e.waitStates(alice, delivery.StateDropped, delivery.StateDropped)
		d := list.Deliveries[0]
		if len(d.Attempts) != 1 || d.Attempts[0].StatusCode != http.StatusBadRequest || d.GuideID != guideReady {
			t.Fatalf("dropped delivery %+v", d)
		}

		e.hooks.setStatus(http.StatusOK)
		w := e.do("POST", deliveriesPath+"/"+d.ID+"/retry", &alice, nil)
		if w.Code != http.StatusAccepted {
			t.Fatalf("retry: %d %s", w.Code, w.Body)
		}
		var retried delivery.Delivery
		decode(t, w, &retried)
		if retried.ID != d.ID || retried.WebhookID != d.WebhookID {
			t.Fatalf("retried %+v, was %+v", retried, d)
		}
		e.waitState(alice, d.ID, delivery.StateDelivered)
		wantError(t, e.do("POST", deliveriesPath+"/"+d.ID+"/retry", &alice, nil), http.StatusConflict, CodeFailedPrecondition)
		wantError(t, e.do("POST", deliveriesPath+"/no-such-id/retry", &alice, nil), http.StatusNotFound, CodeNotFound)

		// Another guide's delivery id is not found through this guide.
		bob := e.newCred("bob", apitoken.ScopeEvents)
		wantError(t, e.do("POST", "/api/v1/guides/"+guideOther+"/events/deliveries/"+d.ID+"/retry", &bob, nil),
			http.StatusNotFound, CodeNotFound)
		wantError(t, e.do("POST", deliveriesPath+"/"+d.ID+"/retry", &bob, nil), http.StatusForbidden, CodePermissionDenied)
		wantError(t, e.do("GET", "/api/v1/guides/nope/events/deliveries", &alice, nil), http.StatusNotFound, CodeNotFound)
	})
}

// waitStates polls the delivery list until the deliveries are in states
// (in list order) and returns it.
func (e *env) waitStates(c cred, states ...string) deliveriesResponse {
	e.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var list deliveriesResponse
		w := e.do("GET", deliveriesPath, &c, nil)
		if w.Code != http.StatusOK {
			e.t.Fatalf("list: %d %s", w.Code, w.Body)
		}
		decode(e.t, w, &list)
		if len(list.Deliveries) == len(states) {
			done := true
			for i, d := range list.Deliveries {
				done = done && d.State == states[i]
			}
			if done {
				return list
			}
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("deliveries never reached %v: %+v", states, list.Deliveries)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitState polls until delivery id is in state.
func (e *env) waitState(c cred, id, state string) {
	e.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var list deliveriesResponse
		decode(e.t, e.do("GET", deliveriesPath, &c, nil), &list)
		for _, d := range list.Deliveries {
			if d.ID == id && d.State == state {
				return
			}
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("delivery %s never reached %s: %+v", id, state, list.Deliveries)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
