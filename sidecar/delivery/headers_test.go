package delivery

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"testing"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/guidepub/guidepub/site"
)

func TestHeadersAndSignature(t *testing.T) {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	secret := "whsec_" + base64.StdEncoding.EncodeToString(key)
	verifier, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			st := openStore(t, b.dsn(t))
			rc := newReceiver(t, func(n int, w http.ResponseWriter, _ *http.Request) {
				if n == 1 {
					w.WriteHeader(503)
					return
				}
				w.WriteHeader(200)
			})
			q := startQueue(t, st, testConfig())
			body := []byte(`{"type":"ready","guideId":"g-signed","note":"é <&>"}`)
			d := enqueueOne(t, q, Message{GuideID: "g-signed", Revision: "r1", Webhook: site.Webhook{URL: rc.srv.URL, Secret: secret}, Body: body})
			got := waitFinal(t, q, "g-signed", d.ID)
			if got.State != StateDelivered || len(got.Attempts) != 2 {
				t.Fatalf("state %s attempts %+v", got.State, got.Attempts)
			}
			reqs := rc.requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests", len(reqs))
			}
			for i, r := range reqs {
				if string(r.body) != string(body) {
					t.Errorf("attempt %d body %q, want the enqueued bytes", i+1, r.body)
				}
				if ct := r.header.Get("Content-Type"); ct != "application/json" {
					t.Errorf("Content-Type %q", ct)
				}
				if id := r.header.Get("webhook-id"); id != d.WebhookID {
					t.Errorf("attempt %d webhook-id %q, want %q", i+1, id, d.WebhookID)
				}
				if ts := r.header.Get("webhook-timestamp"); ts != strconv.FormatInt(got.Attempts[i].At.Unix(), 10) {
					t.Errorf("attempt %d webhook-timestamp %s, attempt at %v", i+1, ts, got.Attempts[i].At)
				}
				if err := verifier.Verify(r.body, r.header); err != nil {
					t.Errorf("attempt %d: Standard Webhooks Verify: %v", i+1, err)
				}
				// A changed body must not verify.
				if err := verifier.Verify(append([]byte(" "), r.body...), r.header); !errors.Is(err, standardwebhooks.ErrNoMatchingSignature) {
					t.Errorf("tampered body verified: %v", err)
				}
			}
		})
	}
}

func TestUnsignedWithoutSecret(t *testing.T) {
	st := openStore(t, backends[0].dsn(t))
	rc := newReceiver(t, status(200))
	q := startQueue(t, st, testConfig())
	d := enqueueOne(t, q, message("g-unsigned", rc.srv.URL, 1))
	waitFinal(t, q, "g-unsigned", d.ID)
	h := rc.requests()[0].header
	if h.Get("webhook-signature") != "" || h.Get("webhook-id") == "" || h.Get("webhook-timestamp") == "" {
		t.Errorf("headers without a secret: %v", h)
	}
}

func TestBadSecretDropped(t *testing.T) {
	st := openStore(t, backends[0].dsn(t))
	rc := newReceiver(t, status(200))
	q := startQueue(t, st, testConfig())
	d := enqueueOne(t, q, Message{GuideID: "g", Webhook: site.Webhook{URL: rc.srv.URL, Secret: "whsec_not base64!"}, Body: []byte(`{}`)})
	got := waitFinal(t, q, "g", d.ID)
	if got.State != StateDropped || len(rc.requests()) != 0 {
		t.Errorf("state %s, %d requests; want dropped without sending", got.State, len(rc.requests()))
	}
}
