package sidecar

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/guidepub/guidepub/sidecar/apitoken"
	"github.com/guidepub/guidepub/sidecar/store"
	"github.com/guidepub/guidepub/site"
)

const (
	objectPath   = "/api/v1/guides/" + guideReady + "/events/ready/object"
	dispatchPath = "/api/v1/guides/" + guideReady + "/events/ready/dispatch"
	testPath     = "/api/v1/integrations/test"
)

func TestAuthentication(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		e := newEnv(t, dsn, nil)
		alice := e.newCred("alice", apitoken.ScopeEvents)
		other := e.newCred("alice", apitoken.ScopeEvents)
		noScope := e.newCred("alice", "guide.read")
		bob := e.newCred("bob", apitoken.ScopeEvents)
		revoked := e.newCred("alice", apitoken.ScopeEvents)
		if err := e.store.RevokeToken(context.Background(), revoked.appID, e.clock.Now()); err != nil {
			t.Fatal(err)
		}
		h := func(kv ...string) http.Header {
			hd := http.Header{}
			for i := 0; i < len(kv); i += 2 {
				hd.Add(kv[i], kv[i+1])
			}
			return hd
		}
		cases := []struct {
			name   string
			path   string
			hdr    http.Header
			status int
			code   string
		}{
			{"valid", testPath, h(HeaderAppID, alice.appID, HeaderAppToken, alice.token), 200, ""},
			{"header names in other case", testPath, h("x-svc-app-id", alice.appID, "X-SVC-APP-TOKEN", alice.token), 200, ""},
			{"no headers", testPath, h(), 401, CodeUnauthenticated},
			{"app id only", testPath, h(HeaderAppID, alice.appID), 401, CodeUnauthenticated},
			{"token only", testPath, h(HeaderAppToken, alice.token), 401, CodeUnauthenticated},
			{"misnamed X-Svc-AppId", testPath, h("X-Svc-AppId", alice.appID, HeaderAppToken, alice.token), 401, CodeUnauthenticated},
			{"misnamed X-Svc-Token", testPath, h(HeaderAppID, alice.appID, "X-Svc-Token", alice.token), 401, CodeUnauthenticated},
			{"bearer only", testPath, h("Authorization", "Bearer "+alice.token), 401, CodeUnauthenticated},
			{"bearer with app id", testPath, h(HeaderAppID, alice.appID, "Authorization", "Bearer "+alice.token), 401, CodeUnauthenticated},
			{"wrong token", testPath, h(HeaderAppID, alice.appID, HeaderAppToken, alice.token+"x"), 401, CodeUnauthenticated},
			{"empty token", testPath, h(HeaderAppID, alice.appID, HeaderAppToken, ""), 401, CodeUnauthenticated},
			{"unknown app id", testPath, h(HeaderAppID, "gpa_0000000000000000", HeaderAppToken, alice.token), 401, CodeUnauthenticated},
			{"token of another app", testPath, h(HeaderAppID, alice.appID, HeaderAppToken, other.token), 401, CodeUnauthenticated},
			{"revoked", testPath, h(HeaderAppID, revoked.appID, HeaderAppToken, revoked.token), 401, CodeUnauthenticated},
			{"huge app id", testPath, h(HeaderAppID, string(bytes.Repeat([]byte("a"), 5000)), HeaderAppToken, alice.token), 401, CodeUnauthenticated},
			{"events without scope", objectPath, h(HeaderAppID, noScope.appID, HeaderAppToken, noScope.token), 403, CodePermissionDenied},
			{"another owner's guide", objectPath, h(HeaderAppID, bob.appID, HeaderAppToken, bob.token), 403, CodePermissionDenied},
			{"another owner's dispatch", dispatchPath, h(HeaderAppID, bob.appID, HeaderAppToken, bob.token), 403, CodePermissionDenied},
			{"another owner's deliveries", "/api/v1/guides/" + guideReady + "/events/deliveries", h(HeaderAppID, bob.appID, HeaderAppToken, bob.token), 403, CodePermissionDenied},
			{"no scope, test endpoint", testPath, h(HeaderAppID, noScope.appID, HeaderAppToken, noScope.token), 200, ""},
		}
		var body401 []byte
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				method := http.MethodGet
				if tc.path == testPath || tc.path == dispatchPath {
					method = http.MethodPost
				}
				w := e.do(method, tc.path, nil, tc.hdr)
				if tc.status == 200 {
					if w.Code != 200 {
						t.Fatalf("status %d, body %s", w.Code, w.Body)
					}
					var got struct{ AppID string }
					decode(t, w, &got)
					if got.AppID != tc.hdr.Get(HeaderAppID) {
						t.Fatalf("appId %q, want %q", got.AppID, tc.hdr.Get(HeaderAppID))
					}
					return
				}
				wantError(t, w, tc.status, tc.code)
				// RFC 9110 §15.5.2: a 401 carries a challenge; RFC 6750 §3
				// names the error only when a bearer token was sent.
				if ch := w.Header().Get("WWW-Authenticate"); tc.status == 401 {
					want := `Bearer realm="guidepub"`
					if strings.HasPrefix(tc.hdr.Get("Authorization"), "Bearer ") {
						want += `, error="invalid_token"`
					}
					if ch != want {
						t.Fatalf("WWW-Authenticate %q, want %q", ch, want)
					}
				} else if ch != "" {
					t.Fatalf("%d with WWW-Authenticate %q", tc.status, ch)
				}
				if tc.status == 401 {
					if body401 == nil {
						body401 = w.Body.Bytes()
					} else if !bytes.Equal(body401, w.Body.Bytes()) {
						t.Fatalf("401 body %q differs from %q", w.Body, body401)
					}
				}
			})
		}
		if string(body401) != `{"code":"unauthenticated"}`+"\n" {
			t.Fatalf("401 body %q", body401)
		}

		// An expired token: it expires in an hour, then the clock moves
		// past its expiry (and past the credential cache).
		t.Run("expired", func(t *testing.T) {
			exp := e.clock.Now().Add(time.Hour)
			tok := e.newExpiringCred("alice", exp)
			w := e.do("POST", testPath, &tok, nil)
			if w.Code != 200 {
				t.Fatalf("before expiry: %d %s", w.Code, w.Body)
			}
			e.clock.Advance(time.Hour)
			wantError(t, e.do("POST", testPath, &tok, nil), 401, CodeUnauthenticated)
		})
	})
}

// newExpiringCred creates a guide.events token for owner that expires at exp.
func (e *env) newExpiringCred(owner string, exp time.Time) cred {
	e.t.Helper()
	id, value, err := apitoken.New(nil)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.store.CreateToken(context.Background(), store.Token{
		AppID: id, OwnerID: owner, Scopes: []string{apitoken.ScopeEvents}, Hash: apitoken.Hash(value),
		CreatedAt: e.clock.Now(), ExpiresAt: &exp,
	}); err != nil {
		e.t.Fatal(err)
	}
	return cred{id, value}
}

func TestRevocationTakesEffectAfterCacheWindow(t *testing.T) {
	e := newEnv(t, storetestSQLite(t), nil)
	c := e.newCred("alice", apitoken.ScopeEvents)
	if w := e.do("POST", testPath, &c, nil); w.Code != 200 {
		t.Fatalf("status %d", w.Code)
	}
	if err := e.store.RevokeToken(context.Background(), c.appID, e.clock.Now()); err != nil {
		t.Fatal(err)
	}
	// Within the window the cached credential may still be used...
	if w := e.do("POST", testPath, &c, nil); w.Code != 200 {
		t.Fatalf("within the cache window: status %d", w.Code)
	}
	// ...and not after it.
	e.clock.Advance(DefaultTokenCacheTTL)
	wantError(t, e.do("POST", testPath, &c, nil), 401, CodeUnauthenticated)
}

func TestEventObject(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		e := newEnv(t, dsn, nil)
		alice := e.newCred("alice", apitoken.ScopeEvents, "guide.read")
		t.Run("ready", func(t *testing.T) {
			for _, q := range []string{"", "?taskId=" + workOrder} {
				w := e.do("GET", objectPath+q, &alice, nil)
				if w.Code != 200 {
					t.Fatalf("%s: status %d %s", q, w.Code, w.Body)
				}
				var got site.ReadyEvent
				decode(t, w, &got)
				if got.AuthToken == "" {
					t.Fatal("no authtoken")
				}
				if err := e.events.VerifyToken(got.AuthToken, guideReady); err != nil {
					t.Fatalf("authtoken does not verify: %v", err)
				}
				if err := e.events.VerifyToken(got.AuthToken, guideOther); err == nil {
					t.Fatal("authtoken verifies for another guide")
				}
				want := readyEvent(guideReady)
				want.AuthToken = got.AuthToken
				wb, _ := json.Marshal(want)
				gb, _ := json.Marshal(got)
				if !bytes.Equal(wb, gb) {
					t.Fatalf("event\n got %s\nwant %s", gb, wb)
				}
				if bytes.Contains(w.Body.Bytes(), []byte(`\u003c`)) {
					t.Fatalf("HTML-escaped body: %s", w.Body)
				}
			}
		})
		t.Run("fresh token each time", func(t *testing.T) {
			var a, b site.ReadyEvent
			decode(t, e.do("GET", objectPath, &alice, nil), &a)
			e.clock.Advance(time.Minute)
			decode(t, e.do("GET", objectPath, &alice, nil), &b)
			if a.AuthToken == b.AuthToken {
				t.Fatal("the same authtoken twice a minute apart")
			}
		})
		t.Run("authtoken valid for three weeks", func(t *testing.T) {
			var ev site.ReadyEvent
			decode(t, e.do("GET", objectPath, &alice, nil), &ev)
			e.clock.Advance(21*24*time.Hour - time.Second)
			if err := e.events.VerifyToken(ev.AuthToken, guideReady); err != nil {
				t.Fatalf("a second before three weeks: %v", err)
			}
			e.clock.Advance(time.Second)
			if err := e.events.VerifyToken(ev.AuthToken, guideReady); err == nil {
				t.Fatal("still valid after three weeks")
			}
		})
		notFound := []struct{ name, path string }{
			{"event type other than ready", "/api/v1/guides/" + guideReady + "/events/draft/object"},
			{"unknown guide", "/api/v1/guides/nope/events/ready/object"},
			{"invalid guide id", "/api/v1/guides/a%20b/events/ready/object"},
			{"not ready", "/api/v1/guides/" + guideNotReady + "/events/ready/object"},
			{"wrong taskId", objectPath + "?taskId=WO-2"},
			{"empty taskId", objectPath + "?taskId="},
		}
		for _, tc := range notFound {
			t.Run(tc.name, func(t *testing.T) {
				wantError(t, e.do("GET", tc.path, &alice, nil), 404, CodeNotFound)
				post := bytes.Replace([]byte(tc.path), []byte("/object"), []byte("/dispatch"), 1)
				wantError(t, e.do("POST", string(post), &alice, nil), 404, CodeNotFound)
			})
		}
		t.Run("authtoken opens the event's private documents", func(t *testing.T) {
			e.write(site.PrivateDocPath(guideReady, "gallery.zip"), []byte("zip bytes"))
			var ev site.ReadyEvent
			decode(t, e.do("GET", objectPath, &alice, nil), &ev)
			u, err := url.Parse(ev.URLs.MediaURLs["en"].GalleryZip)
			if err != nil {
				t.Fatal(err)
			}
			w := e.do("GET", u.Path+"?accessToken="+url.QueryEscape(ev.AuthToken), nil, nil)
			if w.Code != 200 || w.Body.String() != "zip bytes" {
				t.Fatalf("GET %s: %d %q", u.Path, w.Code, w.Body)
			}
		})
		t.Run("event changes on disk", func(t *testing.T) {
			ev := readyEvent(guideReady)
			ev.WorkOrderID = "WO-9"
			ev.Property.City = "Ottawa, a longer name"
			e.writeJSON(site.EventPath(guideReady), ev)
			defer e.writeJSON(site.EventPath(guideReady), readyEvent(guideReady))
			obj, err := e.events.Object(context.Background(), guideReady)
			if err != nil || obj.Property.City != ev.Property.City {
				t.Fatalf("Object right after the change: %v, city %q", err, obj.Property.City)
			}
			// The endpoint may serve the previous event for up to Recheck.
			e.clock.Advance(Recheck)
			var got site.ReadyEvent
			decode(t, e.do("GET", objectPath, &alice, nil), &got)
			if got.Property.City != ev.Property.City {
				t.Fatalf("served a stale event after %s: city %q", Recheck, got.Property.City)
			}
			if w := e.do("GET", objectPath+"?taskId=WO-9", &alice, nil); w.Code != 200 {
				t.Fatalf("the new work order: %d %s", w.Code, w.Body)
			}
		})
	})
}

// storetestSQLite is a SQLite store path for tests that need only one backend.
func storetestSQLite(t testing.TB) string { return backends[0].dsn(t) }

func TestDispatchDelivers(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		e := newEnv(t, dsn, nil)
		e.startQueue()
		alice := e.newCred("alice", apitoken.ScopeEvents)
		w := e.do("POST", dispatchPath+"?taskId="+workOrder, &alice, nil)
		if w.Code != http.StatusAccepted {
			t.Fatalf("status %d %s", w.Code, w.Body)
		}
		var resp struct {
			Deliveries []struct{ ID, URL string }
		}
		decode(t, w, &resp)
		if len(resp.Deliveries) != 2 || resp.Deliveries[0].URL != e.hooks.URL+"/a" || resp.Deliveries[1].URL != e.hooks.URL+"/b" {
			t.Fatalf("deliveries %+v", resp.Deliveries)
		}
		if resp.Deliveries[0].ID == "" || resp.Deliveries[0].ID == resp.Deliveries[1].ID {
			t.Fatalf("delivery ids %+v", resp.Deliveries)
		}
		for range 2 {
			select {
			case <-e.hooks.got:
			case <-time.After(20 * time.Second):
				t.Fatal("webhook not delivered")
			}
		}
		e.hooks.mu.Lock()
		body := e.hooks.bodies[0]
		e.hooks.mu.Unlock()
		var ev site.ReadyEvent
		if err := json.Unmarshal(body, &ev); err != nil {
			t.Fatalf("delivered body %s: %v", body, err)
		}
		if ev.GuideID != guideReady || ev.Type != "ready" {
			t.Fatalf("delivered %s", body)
		}
		if err := e.events.VerifyToken(ev.AuthToken, guideReady); err != nil {
			t.Fatalf("delivered authtoken: %v", err)
		}
		// A second dispatch queues again: dispatch is on demand.
		w = e.do("POST", dispatchPath, &alice, nil)
		decode(t, w, &resp)
		if w.Code != http.StatusAccepted || len(resp.Deliveries) != 2 {
			t.Fatalf("second dispatch: %d %s", w.Code, w.Body)
		}
	})
}

func TestEnqueueOncePerRevision(t *testing.T) {
	e := newEnv(t, storetestSQLite(t), nil)
	ctx := context.Background()
	ds, before, err := e.events.Enqueue(ctx, guideReady)
	if err != nil || len(ds) != 2 || before != 0 {
		t.Fatalf("first Enqueue: %v, %d deliveries, %d sent before", err, len(ds), before)
	}
	ds, before, err = e.events.Enqueue(ctx, guideReady)
	if err != nil || len(ds) != 0 || before != 2 {
		t.Fatalf("second Enqueue of the same revision: %v, %d deliveries, %d sent before (want 0 and 2)", err, len(ds), before)
	}
	if _, _, err := e.events.Enqueue(ctx, guideNotReady); err != ErrNotReady {
		t.Fatalf("Enqueue of a guide not ready: %v", err)
	}
	if _, _, err := e.events.Enqueue(ctx, "missing"); err != ErrGuideNotFound {
		t.Fatalf("Enqueue of an unknown guide: %v", err)
	}
	obj, err := e.events.Object(ctx, guideReady)
	if err != nil || obj.AuthToken == "" || obj.GuideID != guideReady {
		t.Fatalf("Object: %v %+v", err, obj)
	}
}

func TestRateLimit(t *testing.T) {
	e := newEnv(t, storetestSQLite(t), func(c *Config) { c.RateLimit, c.Burst = 2, 2 })
	a := e.newCred("alice", apitoken.ScopeEvents)
	b := e.newCred("alice", apitoken.ScopeEvents)
	for i := range 2 {
		if w := e.do("POST", testPath, &a, nil); w.Code != 200 {
			t.Fatalf("request %d: %d", i, w.Code)
		}
	}
	w := e.do("POST", testPath, &a, nil)
	wantError(t, w, http.StatusTooManyRequests, CodeResourceExhausted)
	if ra := w.Header().Get("Retry-After"); ra != "1" {
		t.Fatalf("Retry-After %q, want 1", ra)
	}
	if w := e.do("POST", testPath, &b, nil); w.Code != 200 {
		t.Fatalf("another app is limited too: %d", w.Code)
	}
	e.clock.Advance(500 * time.Millisecond)
	if w := e.do("POST", testPath, &a, nil); w.Code != 200 {
		t.Fatalf("after half a second (one token back): %d", w.Code)
	}
	wantError(t, e.do("POST", testPath, &a, nil), http.StatusTooManyRequests, CodeResourceExhausted)
}

func TestUnknownPathsAndMethods(t *testing.T) {
	e := newEnv(t, storetestSQLite(t), nil)
	alice := e.newCred("alice", apitoken.ScopeEvents)
	for _, tc := range []struct {
		method, path string
		status       int
	}{
		{"GET", "/", 404},
		{"GET", "/api/v2/whatever", 404},
		{"GET", "/api/v1/guides", 404},
		{"GET", testPath, 405},
		{"DELETE", objectPath, 405},
		{"GET", dispatchPath, 405},
		{"POST", "/private/" + guideReady + "/x.pdf", 405},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			code := CodeNotFound
			if tc.status == 405 {
				code = CodeInvalidArgument
			}
			wantError(t, e.do(tc.method, tc.path, &alice, nil), tc.status, code)
		})
	}
}

func TestHealthReadyMetricsOpenAPI(t *testing.T) {
	e := newEnv(t, storetestSQLite(t), nil)
	if w := e.do("GET", "/healthz", nil, nil); w.Code != 200 {
		t.Fatalf("healthz %d", w.Code)
	}
	if w := e.do("GET", "/readyz", nil, nil); w.Code != 200 {
		t.Fatalf("readyz %d %s", w.Code, w.Body)
	}
	w := e.do("GET", "/api/v1/openapi.json", nil, nil)
	var doc struct {
		OpenAPI string         `json:"openapi"`
		Paths   map[string]any `json:"paths"`
	}
	decode(t, w, &doc)
	if w.Code != 200 || doc.OpenAPI == "" || doc.Paths["/api/v1/integrations/test"] == nil {
		t.Fatalf("openapi.json: %d, %d paths", w.Code, len(doc.Paths))
	}
	e.do("POST", testPath, nil, nil)
	w = e.do("GET", "/metrics", nil, nil)
	if w.Code != 200 || !bytes.Contains(w.Body.Bytes(), []byte(`guidepub_sidecar_requests_total{code="401",route="POST /api/v1/integrations/test"} 1`)) {
		t.Fatalf("metrics %d:\n%s", w.Code, w.Body)
	}
	e.store.Close()
	wantError(t, e.do("GET", "/readyz", nil, nil), http.StatusServiceUnavailable, "unavailable")
}

// TestRequestLog: each request gets one log line, unless NoRequestLog.
func TestRequestLog(t *testing.T) {
	for _, quiet := range []bool{false, true} {
		var logs bytes.Buffer
		e := newEnv(t, storetestSQLite(t), func(c *Config) {
			c.Logger, c.NoRequestLog = slog.New(slog.NewTextHandler(&logs, nil)), quiet
		})
		logs.Reset()
		e.do("GET", "/healthz", nil, nil)
		if got := strings.Count(logs.String(), "msg=request "); got != map[bool]int{false: 1, true: 0}[quiet] {
			t.Errorf("NoRequestLog %v: %d request lines:\n%s", quiet, got, logs.String())
		}
	}
}
