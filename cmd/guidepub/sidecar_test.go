package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/guidepub/guidepub/sidecar"
	"github.com/guidepub/guidepub/sidecar/apitoken"
	"github.com/guidepub/guidepub/sidecar/delivery"
	"github.com/guidepub/guidepub/sidecar/store/storetest"
	"github.com/guidepub/guidepub/site"
)

// createToken runs "token create --json" for owner with scopes on the store
// in priv and returns the credentials it printed.
func createToken(t *testing.T, priv, owner, scopes string) (cred struct{ AppID, Token string }) {
	t.Helper()
	code, out, errs := runCLI(t, "token", "create", "--owner", owner, "--scopes", scopes, "--json", "--private", priv, "--create")
	if code != 0 {
		t.Fatalf("token create: %s", errs)
	}
	if err := json.Unmarshal([]byte(out), &cred); err != nil {
		t.Fatal(err)
	}
	return cred
}

func TestTokenCommands(t *testing.T) {
	t.Run("sqlite, default store in --private", func(t *testing.T) {
		priv := t.TempDir()
		testTokenCommands(t, []string{"--private", priv}, []string{"--store", filepath.Join(priv, defaultStoreFile)})
	})
	t.Run("postgres", func(t *testing.T) {
		dsn := storetest.Postgres(t)
		testTokenCommands(t, []string{"--store", dsn}, []string{"--store", dsn})
	})
}

// testTokenCommands runs create, list and revoke; storeArgs and
// listArgs name the same store.
func testTokenCommands(t *testing.T, storeArgs, listArgs []string) {
	code, out, errs := runCLI(t, append([]string{"token", "create", "--owner", "alice", "--scopes", "guide.events,guide.read",
		"--expires", "720h", "--json", "--create"}, storeArgs...)...)
	if code != 0 {
		t.Fatalf("create: exit %d: %s", code, errs)
	}
	var created struct{ AppID, Token string }
	if err := json.Unmarshal([]byte(out), &created); err != nil {
		t.Fatalf("create --json printed %q: %v", out, err)
	}
	if !strings.HasPrefix(created.AppID, apitoken.AppIDPrefix) || !apitoken.WellFormed(created.Token) {
		t.Fatalf("created %+v", created)
	}

	code, out, errs = runCLI(t, append([]string{"token", "create", "--owner", "bob", "--scopes", "guide.list"}, storeArgs...)...)
	if code != 0 || !strings.Contains(out, "shown only once") || !strings.Contains(out, apitoken.TokenPrefix) {
		t.Fatalf("create for a person: exit %d\n%s%s", code, out, errs)
	}

	list := func(args ...string) []tokenInfo {
		t.Helper()
		code, out, errs := runCLI(t, append(append([]string{"token", "list", "--json"}, listArgs...), args...)...)
		if code != 0 {
			t.Fatalf("list: exit %d: %s", code, errs)
		}
		if strings.Contains(out, created.Token) {
			t.Fatal("list shows a token value")
		}
		var infos []tokenInfo
		if err := json.Unmarshal([]byte(out), &infos); err != nil {
			t.Fatalf("list --json printed %q: %v", out, err)
		}
		return infos
	}
	all := list()
	if len(all) != 2 {
		t.Fatalf("list: %+v", all)
	}
	alice := list("--owner", "alice")
	if len(alice) != 1 || alice[0].AppID != created.AppID || alice[0].Status != "active" ||
		strings.Join(alice[0].Scopes, ",") != "guide.events,guide.read" || alice[0].ExpiresAt == nil {
		t.Fatalf("alice's tokens: %+v", alice)
	}
	if d := time.Until(*alice[0].ExpiresAt); d < 719*time.Hour || d > 721*time.Hour {
		t.Fatalf("expires in %s, want 720h", d)
	}
	code, out, errs = runCLI(t, append([]string{"token", "list"}, storeArgs...)...)
	if code != 0 || !strings.Contains(out, created.AppID) || !strings.Contains(out, "STATUS") {
		t.Fatalf("list table: exit %d\n%s%s", code, out, errs)
	}

	if code, _, errs = runCLI(t, append(append([]string{"token", "revoke"}, storeArgs...), created.AppID)...); code != 0 {
		t.Fatalf("revoke: exit %d: %s", code, errs)
	}
	if got := list("--owner", "alice"); got[0].Status != "revoked" || got[0].RevokedAt == nil {
		t.Fatalf("after revoke: %+v", got)
	}
	if code, _, errs = runCLI(t, append(append([]string{"token", "revoke"}, storeArgs...), "gpa_nope")...); code != exitFailure || !strings.Contains(errs, "gpa_nope") {
		t.Fatalf("revoke unknown: exit %d: %s", code, errs)
	}
}

func TestTokenUsageErrors(t *testing.T) {
	priv := t.TempDir()
	for name, args := range map[string][]string{
		"unknown scope":       {"create", "--owner", "a", "--scopes", "guide.events,admin", "--private", priv},
		"no scopes":           {"create", "--owner", "a", "--scopes", " , ", "--private", priv},
		"no owner":            {"create", "--scopes", "guide.events", "--private", priv},
		"no store":            {"create", "--owner", "a", "--scopes", "guide.events"},
		"bad expiry":          {"create", "--owner", "a", "--scopes", "guide.events", "--expires", "soon", "--private", priv},
		"past expiry":         {"create", "--owner", "a", "--scopes", "guide.events", "--expires", "2001-01-01T00:00:00Z", "--private", priv},
		"negative expiry":     {"create", "--owner", "a", "--scopes", "guide.events", "--expires", "-1h", "--private", priv},
		"revoke without id":   {"revoke", "--private", priv},
		"revoke with two ids": {"revoke", "--private", priv, "a", "b"},
		"bucket, no store":    {"list", "--private", "s3://private?region=eu-west-1"},
	} {
		t.Run(name, func(t *testing.T) {
			code, out, errs := runCLI(t, append([]string{"token"}, args...)...)
			if code != exitUsage {
				t.Fatalf("exit %d, want %d\n%s%s", code, exitUsage, out, errs)
			}
		})
	}
}

func TestParseRate(t *testing.T) {
	for in, want := range map[string]float64{"100/s": 100, "60/m": 1, "3600/h": 1, "5": 5, "0": 0, " 2 / s ": 2} {
		if got, err := parseRate(in); err != nil || got != want {
			t.Errorf("parseRate(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "x", "-1/s", "10/d", "NaN", "1e10"} {
		if _, err := parseRate(in); err == nil {
			t.Errorf("parseRate(%q) succeeded", in)
		}
	}
}

func TestParseSigningKeys(t *testing.T) {
	k1 := bytes.Repeat([]byte{1}, 32)
	k2 := bytes.Repeat([]byte{0xfb}, 40)
	keys, err := parseSigningKeys([]string{base64.StdEncoding.EncodeToString(k1) + "," + base64.RawURLEncoding.EncodeToString(k2)})
	if err != nil || len(keys) != 2 || !bytes.Equal(keys[0], k1) || !bytes.Equal(keys[1], k2) {
		t.Fatalf("keys %x, %v", keys, err)
	}
	for _, bad := range []string{"not base64!", base64.StdEncoding.EncodeToString([]byte("short"))} {
		if _, err := parseSigningKeys([]string{bad}); err == nil {
			t.Errorf("parseSigningKeys(%q) succeeded", bad)
		}
	}
}

// TestSidecarServesAndShutsDown runs the sidecar on a loopback listener,
// calls the Portal API with credentials made by "token create", then
// cancels the context and expects a clean shutdown.
func TestSidecarServesAndShutsDown(t *testing.T) {
	priv := t.TempDir()
	cred := createToken(t, priv, "alice", "guide.events")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	cfg := sidecarConfig{
		Private: priv, Store: filepath.Join(priv, defaultStoreFile),
		RetryMin: time.Minute, RetryMax: time.Minute, MaxAttempts: 5, DeliveryTimeout: time.Second, DeliveryWorkers: 1,
		RateLimit: 100,
	}
	go func() { done <- runSidecar(ctx, cfg, ln, slog.New(slog.DiscardHandler)) }()
	base := "http://" + ln.Addr().String()

	resp, err := http.Get(base + "/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("healthz: %v %v", resp, err)
	}
	resp.Body.Close()
	req, _ := http.NewRequest("POST", base+"/api/v1/integrations/test", nil)
	req.Header.Set(sidecar.HeaderAppID, cred.AppID)
	req.Header.Set(sidecar.HeaderAppToken, cred.Token)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.Contains(body, []byte(cred.AppID)) {
		t.Fatalf("integrations/test: %d %s", resp.StatusCode, body)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("sidecar returned %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("sidecar did not shut down")
	}
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Fatal("still serving after shutdown")
	}
}

// TestSidecarShutdownFinishesInFlightSend dispatches a ready event to a
// receiver that holds the request, shuts the sidecar down while the send
// is in flight, and expects the send to complete and be recorded.
func TestSidecarShutdownFinishesInFlightSend(t *testing.T) {
	got := make(chan struct{}, 1)
	release := make(chan struct{})
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		got <- struct{}{}
		<-release
		w.WriteHeader(http.StatusNoContent)
	}))
	defer hook.Close()

	priv := t.TempDir()
	writeSidecarGuide(t, priv, "g1", "alice", hook.URL)
	cred := createToken(t, priv, "alice", "guide.events")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg := sidecarConfig{
		Private: priv, Store: filepath.Join(priv, defaultStoreFile),
		RetryMin: time.Minute, RetryMax: time.Minute, MaxAttempts: 5, DeliveryTimeout: 20 * time.Second,
		DeliveryWorkers: 2, AllowPrivateTargets: true,
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- runSidecar(ctx, cfg, ln, slog.New(slog.DiscardHandler)) }()
	base := "http://" + ln.Addr().String()

	req, _ := http.NewRequest("POST", base+"/api/v1/guides/g1/events/ready/dispatch", nil)
	req.Header.Set(sidecar.HeaderAppID, cred.AppID)
	req.Header.Set(sidecar.HeaderAppToken, cred.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("dispatch: %d", resp.StatusCode)
	}
	mresp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(mresp.Body)
	mresp.Body.Close()
	for _, name := range []string{"guidepub_sidecar_requests_total", "guidepub_webhook_queue_depth", "go_goroutines"} {
		if !bytes.Contains(metrics, []byte(name)) {
			t.Errorf("/metrics has no %s", name)
		}
	}
	select {
	case <-got:
	case <-time.After(30 * time.Second):
		t.Fatal("webhook never sent")
	}
	cancel() // the send is in flight
	// Release the receiver once the listener is closed: the shutdown has begun.
	for {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			break
		}
		c.Close()
		time.Sleep(5 * time.Millisecond)
	}
	close(release)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("sidecar returned %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("sidecar did not shut down")
	}

	parts, err := openSidecar(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer parts.Close(context.Background())
	ds, err := parts.Queue.Deliveries(context.Background(), "g1")
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 1 || ds[0].State != delivery.StateDelivered || len(ds[0].Attempts) != 1 {
		t.Fatalf("after shutdown: %+v", ds)
	}
}

// writeSidecarGuide writes a ready guide with one webhook to the private
// tree priv.
func writeSidecarGuide(t *testing.T, priv, id, owner, hook string) {
	t.Helper()
	rec := site.GuideRecord{GuideID: id, OwnerID: owner, WorkOrderID: "WO", DefaultViewID: id + "-v",
		ViewIDs: []string{id + "-v"}, Revision: "r1", Ready: true, Webhooks: []site.Webhook{{URL: hook}}}
	ev := site.ReadyEvent{Type: site.EventReady, GuideID: id, DefaultViewID: id + "-v", WorkOrderID: "WO"}
	for p, v := range map[string]any{site.RecordPath(id): rec, site.EventPath(id): ev} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		full := filepath.Join(priv, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestSidecarUsageErrors(t *testing.T) {
	priv := t.TempDir()
	file := filepath.Join(priv, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for name, args := range map[string][]string{
		"no private":         {"--addr", "127.0.0.1:0"},
		"private not folder": {"--addr", "127.0.0.1:0", "--private", file, "--store", filepath.Join(priv, "x.db")},
		"bad rate":           {"--addr", "127.0.0.1:0", "--private", priv, "--rate-limit", "fast"},
		"short signing key":  {"--addr", "127.0.0.1:0", "--private", priv, "--signing-key", base64.StdEncoding.EncodeToString([]byte("short"))},
		"retry max < min":    {"--addr", "127.0.0.1:0", "--private", priv, "--retry-min", "2m", "--retry-max", "1m"},
		"zero attempts":      {"--addr", "127.0.0.1:0", "--private", priv, "--max-attempts", "0"},
		"bad trusted proxy":  {"--addr", "127.0.0.1:0", "--private", priv, "--trusted-proxies", "10.0.0.0/8,nginx"},
		"bucket, no store":   {"--addr", "127.0.0.1:0", "--private", "s3://private?region=eu-west-1"},
	} {
		t.Run(name, func(t *testing.T) {
			code, out, errs := runCLI(t, append([]string{"sidecar"}, args...)...)
			if code != exitUsage {
				t.Fatalf("exit %d, want %d\n%s%s", code, exitUsage, out, errs)
			}
		})
	}
}

// TestDefaultInstanceIDPortZero checks that sidecars listening on port 0
// (any free port) do not share the default instance id, which would let
// one reclaim the other's running deliveries at start.
func TestDefaultInstanceIDPortZero(t *testing.T) {
	id := defaultInstanceID("127.0.0.1:0")
	if strings.HasSuffix(id, ":0") || !strings.Contains(id, strconv.Itoa(os.Getpid())) {
		t.Errorf("defaultInstanceID(127.0.0.1:0) = %q, want one naming this process", id)
	}
	if id := defaultInstanceID("127.0.0.1:9090"); !strings.HasSuffix(id, "/127.0.0.1:9090") {
		t.Errorf("defaultInstanceID(127.0.0.1:9090) = %q, want it to end in the address", id)
	}
}
