package openapi_test

// The OpenAPI document of this package cannot drift from the code: the
// fixtures are exported, served by site/serve and by the sidecar (on a
// SQLite and on a PostgreSQL store) on real HTTP servers, every documented
// operation is called (error cases too), and every response and webhook
// delivery is validated against the document. A status the document lists
// but no call produced fails the test as well.

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/exporter"
	"github.com/guidepub/guidepub/fixtures"
	"github.com/guidepub/guidepub/sidecar"
	"github.com/guidepub/guidepub/sidecar/apitoken"
	"github.com/guidepub/guidepub/sidecar/delivery"
	"github.com/guidepub/guidepub/sidecar/store"
	"github.com/guidepub/guidepub/sidecar/store/storetest"
	"github.com/guidepub/guidepub/site"
	"github.com/guidepub/guidepub/site/clock/clocktest"
	"github.com/guidepub/guidepub/site/openapi"
	"github.com/guidepub/guidepub/site/serve"
)

// specChecker sends requests and validates each response against the
// document, remembering which operation answered with which status.
type specChecker struct {
	doc    *openapi3.T
	router routers.Router
	client *http.Client

	mu   sync.Mutex
	seen map[string]bool // "operationId status"
}

func newSpecChecker(t *testing.T) *specChecker {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(openapi.Document())
	if err != nil {
		t.Fatalf("load the OpenAPI document: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("the OpenAPI document is invalid: %v", err)
	}
	// The test servers listen on loopback ports, not on the documented
	// hosts: match paths only.
	doc.Servers = nil
	for _, item := range doc.Paths.Map() {
		item.Servers = nil
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	return &specChecker{
		doc: doc, router: router, seen: map[string]bool{},
		// No transparent decompression: responses are validated as sent.
		client: &http.Client{Transport: &http.Transport{DisableCompression: true}},
	}
}

// route finds the documented operation of req. Private document paths may
// hold slashes, which path templates cannot express, so they are matched
// by prefix.
func (c *specChecker) route(req *http.Request) (*routers.Route, map[string]string, error) {
	if rest, ok := strings.CutPrefix(req.URL.Path, site.PrivatePrefix); ok {
		guideID, rel, _ := strings.Cut(rest, "/")
		const p = "/private/{guideId}/{path}"
		item := c.doc.Paths.Value(p)
		op := item.GetOperation(req.Method)
		if op == nil {
			return nil, nil, routers.ErrMethodNotAllowed
		}
		return &routers.Route{Spec: c.doc, Path: p, PathItem: item, Method: req.Method, Operation: op},
			map[string]string{"guideId": guideID, "path": rel}, nil
	}
	return c.router.FindRoute(req)
}

// specCall is one request of the test.
type specCall struct {
	method, url string
	header      http.Header
	form        url.Values   // sent as an application/x-www-form-urlencoded body
	client      *http.Client // instead of the checker's (cookies, no redirects)
	want        int          // expected status
	validReq    bool         // the request itself must conform to the document
}

// do sends the call, checks its status, validates the response against the
// document and returns the (decompressed) body and the response.
func (c *specChecker) do(t *testing.T, cl specCall) ([]byte, *http.Response) {
	t.Helper()
	var reqBody io.Reader
	if cl.form != nil {
		reqBody = strings.NewReader(cl.form.Encode())
	}
	req, err := http.NewRequest(cl.method, cl.url, reqBody)
	if err != nil {
		t.Fatal(err)
	}
	if cl.form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(cl.form.Encode())), nil }
	}
	for k, v := range cl.header {
		req.Header[k] = v
	}
	client := c.client
	if cl.client != nil {
		client = cl.client
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", cl.method, cl.url, err)
	}
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	body := raw
	if resp.Header.Get("Content-Encoding") == "gzip" && resp.StatusCode == http.StatusOK {
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("%s %s: gzip body: %v", cl.method, cl.url, err)
		}
		if body, err = io.ReadAll(zr); err != nil {
			t.Fatalf("%s %s: gzip body: %v", cl.method, cl.url, err)
		}
	}
	if resp.StatusCode != cl.want {
		t.Errorf("%s %s: status %d, want %d; body %s", cl.method, req.URL.Path, resp.StatusCode, cl.want, specTruncate(raw))
	}

	route, params, err := c.route(req)
	if err != nil {
		t.Errorf("%s %s: no documented operation: %v", cl.method, req.URL.Path, err)
		return body, resp
	}
	ctx := context.Background()
	in := &openapi3filter.RequestValidationInput{
		Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc},
	}
	if cl.validReq {
		if req.GetBody != nil {
			req.Body, _ = req.GetBody()
		}
		if err := openapi3filter.ValidateRequest(ctx, in); err != nil {
			t.Errorf("%s %s: the request does not conform to the document: %v", cl.method, req.URL.Path, err)
		}
	}
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in,
		Status:                 resp.StatusCode,
		Header:                 resp.Header,
		// A byte range is not a JSON value: its headers are checked, not its body.
		Options: &openapi3filter.Options{IncludeResponseStatus: true, ExcludeResponseBody: resp.StatusCode == http.StatusPartialContent},
	}
	out.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
		t.Errorf("%s %s: %d response does not match the document: %v\nbody: %s", cl.method, req.URL.Path, resp.StatusCode, err, specTruncate(body))
	}
	c.mu.Lock()
	c.seen[route.Operation.OperationID+" "+strconv.Itoa(resp.StatusCode)] = true
	c.mu.Unlock()
	return body, resp
}

func specTruncate(b []byte) string {
	if len(b) > 400 {
		return string(b[:400]) + "…"
	}
	return string(b)
}

// checkCoverage fails for every documented operation and status that no
// call produced.
func (c *specChecker) checkCoverage(t *testing.T) {
	t.Helper()
	var missing []string
	for p, item := range c.doc.Paths.Map() {
		for _, op := range item.Operations() {
			for code := range op.Responses.Map() {
				key := op.OperationID + " " + code
				if c.seen[key] {
					continue
				}
				missing = append(missing, key+" ("+p+")")
			}
		}
	}
	sort.Strings(missing)
	for _, m := range missing {
		t.Errorf("documented but never produced by the code under test: %s", m)
	}
}

// specReceiver is a webhook endpoint answering every POST with status and
// keeping each request it got.
type specReceiver struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []*http.Request // with Body replaced by the bytes read
	hold chan struct{}   // non-nil: answers wait until it is closed
}

// holdAnswers makes the receiver keep every request waiting until the
// returned function is called, so a delivery stays in flight.
func (rc *specReceiver) holdAnswers() (release func()) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	hold := make(chan struct{})
	rc.hold = hold
	return sync.OnceFunc(func() {
		rc.mu.Lock()
		rc.hold = nil
		rc.mu.Unlock()
		close(hold)
	})
}

func newSpecReceiver(t *testing.T, status int) *specReceiver {
	t.Helper()
	rc := &specReceiver{}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r2 := r.Clone(context.Background())
		r2.Body = io.NopCloser(bytes.NewReader(body))
		r2.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		rc.mu.Lock()
		rc.reqs = append(rc.reqs, r2)
		hold := rc.hold
		rc.mu.Unlock()
		if hold != nil {
			select {
			case <-hold:
			case <-r.Context().Done():
			}
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(rc.Close)
	return rc
}

// checkWebhooks validates every delivery the receivers got against the
// document's "ready" webhook: its headers and its body.
func (c *specChecker) checkWebhooks(t *testing.T, rcs ...*specReceiver) {
	t.Helper()
	item := c.doc.Webhooks["ready"]
	if item == nil || item.Post == nil {
		t.Fatal("the document has no ready webhook")
	}
	route := &routers.Route{Spec: c.doc, Path: "ready", PathItem: item, Method: http.MethodPost, Operation: item.Post}
	n := 0
	for _, rc := range rcs {
		rc.mu.Lock()
		reqs := slices.Clone(rc.reqs)
		rc.mu.Unlock()
		for _, r := range reqs {
			n++
			body, _ := r.GetBody()
			r.Body = body
			in := &openapi3filter.RequestValidationInput{Request: r, Route: route,
				Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
			if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
				t.Errorf("webhook delivery to %s does not match the document: %v", r.URL.Path, err)
			}
			if r.Header.Get("webhook-signature") == "" {
				t.Errorf("webhook delivery to %s is not signed, though its webhook has a secret", r.URL.Path)
			}
		}
	}
	if n == 0 {
		t.Error("no webhook delivery was received")
	}
}

// specToken stores credentials for owner with scopes and returns the two
// header values.
func specToken(t *testing.T, st *store.Store, owner string, scopes ...string) http.Header {
	t.Helper()
	appID, value, err := apitoken.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	err = st.CreateToken(context.Background(), store.Token{
		AppID: appID, OwnerID: owner, Scopes: scopes, Hash: apitoken.Hash(value), CreatedAt: time.Now(),
	})
	if err != nil {
		t.Fatal(err)
	}
	return http.Header{sidecar.HeaderAppID: {appID}, sidecar.HeaderAppToken: {value}}
}

// specSetWebhooks points every webhook of guideID's record at url, so nothing
// leaves the machine.
func specSetWebhooks(t *testing.T, privDir, guideID, url string) {
	t.Helper()
	p := filepath.Join(privDir, filepath.FromSlash(site.RecordPath(guideID)))
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var rec site.GuideRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	rec.Webhooks = []site.Webhook{{URL: url, Secret: specSecret}}
	if data, err = json.Marshal(rec); err != nil {
		t.Fatal(err)
	}
	// A fresh modification time makes the sidecar read the record again.
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Duration(specStamps.Add(1)) * time.Second)
	if err := os.Chtimes(p, later, later); err != nil {
		t.Fatal(err)
	}
}

// specSecret signs the test deliveries: whsec_ and the base64 of 32 bytes.
const specSecret = "whsec_MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="

// specStamps makes each rewrite of a record newer than the one before.
var specStamps atomic.Int64

// specRecords returns every guide record of the private tree, by guide id.
func specRecords(t *testing.T, privDir string) map[string]site.GuideRecord {
	t.Helper()
	out := map[string]site.GuideRecord{}
	matches, err := filepath.Glob(filepath.Join(privDir, site.GuidesDir, "*", site.RecordFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range matches {
		data, err := os.ReadFile(m)
		if err != nil {
			t.Fatal(err)
		}
		var rec site.GuideRecord
		if err := json.Unmarshal(data, &rec); err != nil {
			t.Fatal(err)
		}
		out[rec.GuideID] = rec
	}
	return out
}

func TestOpenAPIMatchesServers(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { specAgainstServers(t, storetest.SQLite(t)) })
	t.Run("postgres", func(t *testing.T) { specAgainstServers(t, storetest.Postgres(t)) })
}

// specAgainstServers exports the fixtures, serves them with site/serve and
// the sidecar on the store dsn, and checks every documented operation.
func specAgainstServers(t *testing.T, dsn string) {
	ctx := context.Background()
	tmp := t.TempDir()
	outDir, privDir := filepath.Join(tmp, "public"), filepath.Join(tmp, "private")
	for _, d := range []string{outDir, privDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	logger := slog.New(slog.DiscardHandler)

	// Export the fixtures at a fixed time.
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	ecfg := exporter.DefaultConfig()
	ecfg.Src, ecfg.SrcDir = afero.FromIOFS{FS: fixtures.Bundles}, "bundles"
	ecfg.Out, ecfg.OutDir, ecfg.Private, ecfg.PrivateDir = afero.NewOsFs(), outDir, afero.NewOsFs(), privDir
	ecfg.Clock, ecfg.Logger, ecfg.Jobs = clocktest.NewClock(now), logger, 2
	exp, err := exporter.New(ecfg)
	if err != nil {
		t.Fatal(err)
	}
	report, err := exp.ExportAll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if report.Rejected > 0 {
		t.Fatalf("fixtures rejected: %s", report.Summary())
	}

	// The public tree, served as a CDN would.
	scfg := serve.DefaultConfig()
	scfg.Logger = logger
	static, err := serve.New(afero.NewOsFs(), outDir, scfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { static.Close() })
	staticSrv := httptest.NewServer(static)
	t.Cleanup(staticSrv.Close)

	// The sidecar, on a real SQLite store, delivering to loopback receivers.
	st, err := store.Open(ctx, dsn, logger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	dcfg := delivery.DefaultConfig()
	dcfg.AllowPrivateTargets, dcfg.Timeout, dcfg.Workers, dcfg.Logger = true, 5*time.Second, 2, logger
	dcfg.PollInterval = 10 * time.Millisecond
	q, err := delivery.New(st, dcfg)
	if err != nil {
		t.Fatal(err)
	}
	auth := specOAuthServer(t, st)
	cfg := sidecar.DefaultConfig()
	cfg.RateLimit = 0 // no limit unless a check sets one
	cfg.PrivateFS, cfg.PrivateDir, cfg.Logger, cfg.OAuth = afero.NewOsFs(), privDir, logger, auth
	ev, err := sidecar.NewEvents(cfg, st, q)
	if err != nil {
		t.Fatal(err)
	}
	side, err := sidecar.New(cfg, st, q, ev)
	if err != nil {
		t.Fatal(err)
	}
	sideSrv := httptest.NewServer(side)
	t.Cleanup(sideSrv.Close)
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		q.Stop(sctx)
	})

	recs := specRecords(t, privDir)
	var ready, notReady site.GuideRecord
	for _, id := range slices.Sorted(maps.Keys(recs)) {
		r := recs[id]
		if r.Ready && ready.GuideID == "" && len(r.Webhooks) > 0 {
			ready = r
		}
		if !r.Ready && notReady.GuideID == "" {
			notReady = r
		}
	}
	if ready.GuideID == "" || notReady.GuideID == "" {
		t.Fatalf("the fixtures need a ready guide with webhooks and a guide that is not ready; records: %v", slices.Sorted(maps.Keys(recs)))
	}
	dropping, accepting := newSpecReceiver(t, http.StatusGone), newSpecReceiver(t, http.StatusNoContent)
	for id := range recs {
		specSetWebhooks(t, privDir, id, accepting.URL+"/"+id)
	}
	specSetWebhooks(t, privDir, ready.GuideID, dropping.URL+"/dropped")

	owner := specToken(t, st, ready.OwnerID, apitoken.ScopeEvents)
	noScope := specToken(t, st, ready.OwnerID, "guide.read")
	stranger := specToken(t, st, "someone-else", apitoken.ScopeEvents)
	notReadyOwner := specToken(t, st, notReady.OwnerID, apitoken.ScopeEvents)
	wrongToken := http.Header{sidecar.HeaderAppID: owner[sidecar.HeaderAppID], sidecar.HeaderAppToken: {"not-the-token"}}
	bearer := http.Header{"Authorization": {"Bearer " + owner.Get(sidecar.HeaderAppToken)}}

	c := newSpecChecker(t)
	api := sideSrv.URL + "/api/v1"
	guide := api + "/guides/" + ready.GuideID + "/events"

	t.Run("portal", func(t *testing.T) {
		body, _ := c.do(t, specCall{method: "POST", url: api + "/integrations/test", header: owner, want: 200, validReq: true})
		if !strings.Contains(string(body), owner.Get(sidecar.HeaderAppID)) {
			t.Errorf("integration test answers %s, want the app id", body)
		}
		c.do(t, specCall{method: "POST", url: api + "/integrations/test", want: 401})
		c.do(t, specCall{method: "POST", url: api + "/integrations/test", header: wrongToken, want: 401})
		c.do(t, specCall{method: "POST", url: api + "/integrations/test", header: bearer, want: 401})

		c.do(t, specCall{method: "GET", url: guide + "/ready/object?taskId=" + url.QueryEscape(ready.WorkOrderID), header: owner, want: 200, validReq: true})
		c.do(t, specCall{method: "GET", url: guide + "/ready/object", header: owner, want: 200, validReq: true})
		c.do(t, specCall{method: "GET", url: guide + "/ready/object", want: 401})
		c.do(t, specCall{method: "GET", url: guide + "/ready/object", header: noScope, want: 403})
		c.do(t, specCall{method: "GET", url: guide + "/ready/object", header: stranger, want: 403})
		c.do(t, specCall{method: "GET", url: guide + "/ready/object?taskId=another-order", header: owner, want: 404})
		c.do(t, specCall{method: "GET", url: guide + "/created/object", header: owner, want: 404})
		c.do(t, specCall{method: "GET", url: api + "/guides/no-such-guide/events/ready/object", header: owner, want: 404})
		c.do(t, specCall{method: "GET", url: api + "/guides/" + notReady.GuideID + "/events/ready/object", header: notReadyOwner, want: 404})

		c.do(t, specCall{method: "POST", url: guide + "/ready/dispatch", want: 401})
		c.do(t, specCall{method: "POST", url: guide + "/ready/dispatch", header: noScope, want: 403})
		c.do(t, specCall{method: "POST", url: api + "/guides/no-such-guide/events/ready/dispatch", header: owner, want: 404})
		c.do(t, specCall{method: "GET", url: guide + "/deliveries", want: 401})
		c.do(t, specCall{method: "GET", url: guide + "/deliveries", header: stranger, want: 403})
		c.do(t, specCall{method: "GET", url: api + "/guides/no-such-guide/events/deliveries", header: owner, want: 404})

		// The token sent both as a bearer token and in X-Svc-App-Token.
		twice := http.Header{"Authorization": {"Bearer ory_at_x.y"}, sidecar.HeaderAppToken: {"ory_at_x.y"}}
		for _, op := range []struct{ method, url string }{
			{"POST", api + "/integrations/test"}, {"GET", guide + "/ready/object"}, {"POST", guide + "/ready/dispatch"},
			{"GET", guide + "/deliveries"}, {"POST", guide + "/deliveries/no-such-delivery/retry"},
		} {
			c.do(t, specCall{method: op.method, url: op.url, header: twice, want: 400})
		}
	})

	t.Run("deliveries", func(t *testing.T) {
		body, _ := c.do(t, specCall{method: "POST", url: guide + "/ready/dispatch?taskId=" + url.QueryEscape(ready.WorkOrderID), header: owner, want: 202, validReq: true})
		var queued struct {
			Deliveries []struct{ ID, URL string }
		}
		if err := json.Unmarshal(body, &queued); err != nil || len(queued.Deliveries) != 1 {
			t.Fatalf("dispatch answered %s (%v), want one delivery", body, err)
		}
		id := queued.Deliveries[0].ID
		// The receiver answers 410: the delivery is dropped after one attempt.
		state := specWaitState(t, q, ready.GuideID, id, "dropped")
		if state != "dropped" {
			t.Fatalf("delivery %s is %s, want dropped", id, state)
		}
		c.do(t, specCall{method: "GET", url: guide + "/deliveries", header: owner, want: 200, validReq: true})
		retry := guide + "/deliveries/" + url.PathEscape(id) + "/retry"
		c.do(t, specCall{method: "POST", url: retry, header: noScope, want: 403})
		c.do(t, specCall{method: "POST", url: retry, want: 401})
		// The receiver keeps the re-sent attempt waiting, so the delivery is
		// queued (or in flight) when it is retried again: not retryable.
		release := dropping.holdAnswers()
		t.Cleanup(release)
		c.do(t, specCall{method: "POST", url: retry, header: owner, want: 202, validReq: true})
		if s := specState(t, q, ready.GuideID, id); s != "queued" && s != "retrying" {
			t.Fatalf("delivery %s is %s right after a retry, want queued", id, s)
		}
		c.do(t, specCall{method: "POST", url: retry, header: owner, want: 409})
		release()
		c.do(t, specCall{method: "POST", url: guide + "/deliveries/no-such-delivery/retry", header: owner, want: 404})

		// A delivered one is not retryable either.
		specSetWebhooks(t, privDir, ready.GuideID, accepting.URL+"/ok")
		body, _ = c.do(t, specCall{method: "POST", url: guide + "/ready/dispatch", header: owner, want: 202, validReq: true})
		if err := json.Unmarshal(body, &queued); err != nil || len(queued.Deliveries) != 1 {
			t.Fatalf("dispatch answered %s (%v), want one delivery", body, err)
		}
		if s := specWaitState(t, q, ready.GuideID, queued.Deliveries[0].ID, "delivered"); s != "delivered" {
			t.Fatalf("delivery is %s, want delivered", s)
		}
		c.do(t, specCall{method: "POST", url: guide + "/deliveries/" + queued.Deliveries[0].ID + "/retry", header: owner, want: 409})
		c.do(t, specCall{method: "GET", url: guide + "/deliveries", header: owner, want: 200, validReq: true})
		c.checkWebhooks(t, dropping, accepting)
	})

	t.Run("private documents", func(t *testing.T) {
		body, _ := c.do(t, specCall{method: "GET", url: guide + "/ready/object", header: owner, want: 200})
		var evt site.ReadyEvent
		if err := json.Unmarshal(body, &evt); err != nil {
			t.Fatal(err)
		}
		docURL := specPrivateURL(evt)
		if docURL == "" {
			t.Fatalf("the ready event of %s lists no private document", ready.GuideID)
		}
		u, err := url.Parse(docURL)
		if err != nil {
			t.Fatal(err)
		}
		doc := sideSrv.URL + u.Path
		tok := "?accessToken=" + url.QueryEscape(evt.AuthToken)
		_, resp := c.do(t, specCall{method: "GET", url: doc + tok, want: 200, validReq: true})
		etag := resp.Header.Get("ETag")
		c.do(t, specCall{method: "GET", url: doc + tok, header: http.Header{"If-None-Match": {etag}}, want: 304})
		c.do(t, specCall{method: "GET", url: doc + tok, header: http.Header{"Range": {"bytes=0-3"}}, want: 206})
		c.do(t, specCall{method: "GET", url: doc, want: 401})
		c.do(t, specCall{method: "HEAD", url: doc + tok, want: 200, validReq: true})
		c.do(t, specCall{method: "HEAD", url: doc, want: 401})
		c.do(t, specCall{method: "HEAD", url: sideSrv.URL + site.PrivatePrefix + ready.GuideID + "/no/such/file.zip" + tok, want: 404})
		c.do(t, specCall{method: "GET", url: doc + "?accessToken=v1.bad", want: 401})
		other := sideSrv.URL + site.PrivatePrefix + notReady.GuideID + "/" + path.Base(u.Path) + tok
		c.do(t, specCall{method: "GET", url: other, want: 401})
		c.do(t, specCall{method: "GET", url: sideSrv.URL + site.PrivatePrefix + ready.GuideID + "/no/such/file.zip" + tok, want: 404})
	})

	t.Run("operations", func(t *testing.T) {
		c.do(t, specCall{method: "GET", url: sideSrv.URL + "/healthz", want: 200, validReq: true})
		c.do(t, specCall{method: "GET", url: sideSrv.URL + "/readyz", want: 200, validReq: true})
		c.do(t, specCall{method: "GET", url: sideSrv.URL + "/metrics", want: 200, validReq: true})
		// The sidecar serves this very document.
		body, _ := c.do(t, specCall{method: "GET", url: sideSrv.URL + openapi.Path, want: 200, validReq: true})
		if !bytes.Equal(body, openapi.Document()) {
			t.Errorf("GET %s does not answer site/openapi's document", openapi.Path)
		}

		// A sidecar whose store has gone is not ready.
		gone, err := store.Open(ctx, filepath.Join(tmp, "gone.db"), logger)
		if err != nil {
			t.Fatal(err)
		}
		gcfg := delivery.DefaultConfig()
		gcfg.Logger = logger
		gq, err := delivery.New(gone, gcfg)
		if err != nil {
			t.Fatal(err)
		}
		gev, err := sidecar.NewEvents(cfg, gone, gq)
		if err != nil {
			t.Fatal(err)
		}
		gsrv, err := sidecar.New(cfg, gone, gq, gev)
		if err != nil {
			t.Fatal(err)
		}
		gone.Close()
		goneSrv := httptest.NewServer(gsrv)
		defer goneSrv.Close()
		c.do(t, specCall{method: "GET", url: goneSrv.URL + "/readyz", want: 503})
		c.do(t, specCall{method: "GET", url: goneSrv.URL + "/healthz", want: 200})
		// The credentials are looked up first: every Portal operation fails
		// with 500 internal, and says no more.
		gguide := goneSrv.URL + "/api/v1/guides/" + ready.GuideID + "/events"
		for _, cl := range []specCall{
			{method: "POST", url: goneSrv.URL + "/api/v1/integrations/test"},
			{method: "GET", url: gguide + "/ready/object"},
			{method: "POST", url: gguide + "/ready/dispatch"},
			{method: "GET", url: gguide + "/deliveries"},
			{method: "POST", url: gguide + "/deliveries/any/retry"},
		} {
			cl.header, cl.want = owner, 500
			body, _ := c.do(t, cl)
			if !strings.Contains(string(body), `"internal"`) || strings.Contains(string(body), "gone.db") {
				t.Errorf("%s %s: 500 body %s: want code internal and no detail", cl.method, cl.url, body)
			}
		}
	})

	t.Run("rate limit", func(t *testing.T) {
		limited := cfg
		limited.RateLimit, limited.Burst = 0.001, 1
		lsrv, err := sidecar.New(limited, st, q, ev)
		if err != nil {
			t.Fatal(err)
		}
		ls := httptest.NewServer(lsrv)
		defer ls.Close()
		lapi := ls.URL + "/api/v1"
		lguide := lapi + "/guides/" + ready.GuideID + "/events"
		calls := []specCall{
			{method: "POST", url: lapi + "/integrations/test"},
			{method: "GET", url: lguide + "/ready/object"},
			{method: "POST", url: lguide + "/ready/dispatch"},
			{method: "GET", url: lguide + "/deliveries"},
			{method: "POST", url: lguide + "/deliveries/any/retry"},
		}
		// The bucket holds one request: the first call spends it.
		c.do(t, specCall{method: "POST", url: lapi + "/integrations/test", header: owner, want: 200})
		for _, cl := range calls {
			cl.header, cl.want = owner, 429
			_, resp := c.do(t, cl)
			if resp.Header.Get("Retry-After") == "" {
				t.Errorf("%s %s: 429 without Retry-After", cl.method, cl.url)
			}
		}
	})

	t.Run("view API", func(t *testing.T) {
		views := specViews(t, outDir)
		if len(views) == 0 {
			t.Fatal("the export wrote no view")
		}
		for _, v := range views {
			for _, doc := range site.Documents {
				want := 200
				if _, err := os.Stat(filepath.Join(outDir, v, filepath.FromSlash(doc))); err != nil {
					want = 404 // hidden, or not ready: no such document
				}
				c.do(t, specCall{method: "GET", url: staticSrv.URL + "/" + v + "/" + doc, want: want, validReq: true})
			}
		}
		// Encodings, conditional and range requests, on every document of
		// a ready view.
		v := ready.DefaultViewID
		for _, doc := range site.Documents {
			u := staticSrv.URL + "/" + v + "/" + doc
			_, resp := c.do(t, specCall{method: "GET", url: u, header: http.Header{"Accept-Encoding": {"gzip"}}, want: 200, validReq: true})
			if resp.Header.Get("Content-Encoding") != "gzip" {
				t.Errorf("GET %s with Accept-Encoding gzip: Content-Encoding %q", u, resp.Header.Get("Content-Encoding"))
			}
			_, resp = c.do(t, specCall{method: "GET", url: u, want: 200})
			c.do(t, specCall{method: "GET", url: u, header: http.Header{"If-None-Match": {resp.Header.Get("ETag")}}, want: 304, validReq: true})
			c.do(t, specCall{method: "GET", url: u, header: http.Header{"Range": {"bytes=0-4"}}, want: 206})
			c.do(t, specCall{method: "GET", url: u, header: http.Header{"Range": {"bytes=100000000-"}}, want: 416})
			c.do(t, specCall{method: "GET", url: u, header: http.Header{"If-Match": {`"not-the-etag"`}}, want: 412})
			c.do(t, specCall{method: "HEAD", url: u, want: 200, validReq: true})
			c.do(t, specCall{method: "HEAD", url: u, header: http.Header{"If-None-Match": {resp.Header.Get("ETag")}}, want: 304})
			c.do(t, specCall{method: "HEAD", url: staticSrv.URL + "/no-such-view/" + doc, want: 404})
			c.do(t, specCall{method: "GET", url: u, header: http.Header{"Accept-Encoding": {"compress, identity;q=0"}}, want: 406})
		}
		c.do(t, specCall{method: "GET", url: staticSrv.URL + "/no-such-view/" + site.StatusFile, want: 404, validReq: true})
	})

	t.Run("oauth", func(t *testing.T) { specOAuth(t, c, sideSrv.URL, st) })

	c.checkCoverage(t)
}

// specPrivateURL returns a private document URL of the event: the first
// present among the private Media URL entries of the first language.
func specPrivateURL(evt site.ReadyEvent) string {
	for _, lang := range site.Languages {
		m, ok := evt.URLs.MediaURLs[lang]
		if !ok {
			continue
		}
		for _, u := range []string{m.GalleryZip, m.GalleryLowResZip, m.SphereZip, m.OfflineZip, m.SVGZip, m.DXFZip, m.TagImagesZip} {
			if strings.Contains(u, site.PrivatePrefix) {
				return u
			}
		}
		for _, f := range append(m.JPGMetric, m.JPGImperial...) {
			if strings.Contains(f.URL, site.PrivatePrefix) {
				return f.URL
			}
		}
	}
	return ""
}

// specViews lists the top-level folders of the public tree that hold a
// view status document: view ids and aliases.
func specViews(t *testing.T, outDir string) []string {
	t.Helper()
	var views []string
	entries, err := os.ReadDir(outDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join(outDir, e.Name(), filepath.FromSlash(site.StatusFile))); err == nil {
			views = append(views, e.Name())
		} else if !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	return views
}

// specState returns the state of delivery id of guideID.
func specState(t *testing.T, q *delivery.Queue, guideID, id string) string {
	t.Helper()
	ds, err := q.Deliveries(context.Background(), guideID)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		if d.ID == id {
			return d.State
		}
	}
	t.Fatalf("no delivery %s for %s", id, guideID)
	return ""
}

// specWaitState polls delivery id until it reaches want (its first attempt
// is made by the queue's workers), for at most 10 seconds, and returns the
// last state seen. It waits for an attempt, never for a retry delay.
func specWaitState(t *testing.T, q *delivery.Queue, guideID, id, want string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	var s string
	for time.Now().Before(deadline) {
		if s = specState(t, q, guideID, id); s == want {
			return s
		}
		time.Sleep(10 * time.Millisecond)
	}
	return s
}
