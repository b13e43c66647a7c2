package edge

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// The CDNs that cannot be reached here are stood in for by local servers
// that check each request as the vendor documents it (method, path,
// credentials, body, the most keys or paths one request may carry) and
// answer as the vendor does, including its refusals: what they accepted is
// recorded.

// cdnServer is a stand-in CDN API: check returns the ids one request
// purged ("*" for everything) or an HTTP status and message to answer.
type cdnServer struct {
	*httptest.Server
	mu      sync.Mutex
	purged  [][]string
	fail    []int // statuses to answer first, one per request
	refused []string
}

func newCDN(t *testing.T, check func(r *http.Request, body []byte) ([]string, int, string)) *cdnServer {
	t.Helper()
	c := &cdnServer{}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		c.mu.Lock()
		defer c.mu.Unlock()
		if len(c.fail) > 0 {
			st := c.fail[0]
			c.fail = c.fail[1:]
			if st == http.StatusTooManyRequests {
				w.Header().Set("Retry-After", "1")
			}
			http.Error(w, "try later", st)
			return
		}
		ids, status, msg := check(r, body)
		if status != 0 {
			c.refused = append(c.refused, msg)
			http.Error(w, msg, status)
			return
		}
		c.purged = append(c.purged, ids)
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, `{"status":"ok","success":true}`)
	}))
	t.Cleanup(c.Close)
	return c
}

// unkeyed returns the ids of guidepub's surrogate keys, and false for a
// key that is not one.
func unkeyed(keys []string) ([]string, bool) {
	var ids []string
	for _, k := range keys {
		id, ok := strings.CutPrefix(k, "guidepub-")
		if !ok || id == "" {
			return nil, false
		}
		ids = append(ids, id)
	}
	return ids, true
}

// fastlyAPI checks Fastly's batch purge: POST /service/{id}/purge with
// Fastly-Key and up to 256 space-separated keys in Surrogate-Key, or
// POST /service/{id}/purge_all.
func fastlyAPI(service, token string) func(*http.Request, []byte) ([]string, int, string) {
	return func(r *http.Request, _ []byte) ([]string, int, string) {
		switch {
		case r.Method != http.MethodPost:
			return nil, http.StatusMethodNotAllowed, "method " + r.Method
		case r.Header.Get("Fastly-Key") != token:
			return nil, http.StatusUnauthorized, "bad token"
		case r.URL.Path == "/service/"+service+"/purge_all":
			return []string{"*"}, 0, ""
		case r.URL.Path != "/service/"+service+"/purge":
			return nil, http.StatusNotFound, "path " + r.URL.Path
		}
		keys := strings.Fields(r.Header.Get("Surrogate-Key"))
		ids, ok := unkeyed(keys)
		if !ok || len(keys) == 0 || len(keys) > 256 {
			return nil, http.StatusBadRequest, fmt.Sprintf("%d keys", len(keys))
		}
		return ids, 0, ""
	}
}

// cloudflareAPI checks Cloudflare's purge: POST
// /client/v4/zones/{zone}/purge_cache with a bearer token and a JSON body
// of up to 100 tags, or purge_everything.
func cloudflareAPI(zone, token string) func(*http.Request, []byte) ([]string, int, string) {
	return func(r *http.Request, body []byte) ([]string, int, string) {
		switch {
		case r.Method != http.MethodPost || r.URL.Path != "/client/v4/zones/"+zone+"/purge_cache":
			return nil, http.StatusNotFound, r.Method + " " + r.URL.Path
		case r.Header.Get("Authorization") != "Bearer "+token:
			return nil, http.StatusForbidden, "bad token"
		case r.Header.Get("Content-Type") != "application/json":
			return nil, http.StatusBadRequest, "content type"
		}
		var req struct {
			Tags            []string `json:"tags"`
			PurgeEverything bool     `json:"purge_everything"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			return nil, http.StatusBadRequest, err.Error()
		}
		if req.PurgeEverything && len(req.Tags) == 0 {
			return []string{"*"}, 0, ""
		}
		ids, ok := unkeyed(req.Tags)
		if !ok || len(req.Tags) == 0 || len(req.Tags) > 100 {
			return nil, http.StatusBadRequest, fmt.Sprintf("%d tags", len(req.Tags))
		}
		return ids, 0, ""
	}
}

// varnishPurge checks the purge the printed VCL takes: PURGE / with the
// keys in xkey-purge, or xkey-purge-all.
func varnishPurge(r *http.Request, _ []byte) ([]string, int, string) {
	switch {
	case r.Method != "PURGE" || r.URL.Path != "/":
		return nil, http.StatusMethodNotAllowed, r.Method + " " + r.URL.Path
	case r.Header.Get("xkey-purge-all") == "1":
		return []string{"*"}, 0, ""
	}
	ids, ok := unkeyed(strings.Fields(r.Header.Get("xkey-purge")))
	if !ok || len(ids) == 0 {
		return nil, http.StatusBadRequest, "keys"
	}
	return ids, 0, ""
}

// cloudFrontAPI stands in for CloudFront's CreateInvalidation (REST-XML,
// API version 2020-05-31, signed with SigV4): it checks the body and
// keeps each invalidation in progress for inProgress, refusing one that
// would bring more than 15 wildcard paths in progress with
// TooManyInvalidationsInProgress, as CloudFront does.
type cloudFrontAPI struct {
	dist       string
	inProgress time.Duration
	mu         sync.Mutex
	running    []cfRun
	refs       map[string]bool
}

type cfRun struct {
	until     time.Time
	wildcards int
}

func (a *cloudFrontAPI) check(r *http.Request, body []byte) ([]string, int, string) {
	if r.Method != http.MethodPost || r.URL.Path != "/2020-05-31/distribution/"+a.dist+"/invalidation" {
		return nil, http.StatusNotFound, r.Method + " " + r.URL.Path
	}
	if msg := checkSigV4(r, body); msg != "" {
		return nil, http.StatusForbidden, msg
	}
	var batch struct {
		CallerReference string `xml:"CallerReference"`
		Paths           struct {
			Quantity int      `xml:"Quantity"`
			Items    []string `xml:"Items>Path"`
		} `xml:"Paths"`
	}
	if err := xml.Unmarshal(body, &batch); err != nil || batch.CallerReference == "" || batch.Paths.Quantity != len(batch.Paths.Items) || len(batch.Paths.Items) == 0 {
		return nil, http.StatusBadRequest, fmt.Sprintf("batch %v %+v", err, batch)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.refs[batch.CallerReference] {
		return nil, 0, "" // the same request again: the same invalidation
	}
	now, wild := time.Now(), 0
	for _, p := range batch.Paths.Items {
		if strings.HasSuffix(p, "*") {
			wild++
		}
	}
	inProgress := 0
	for _, run := range a.running {
		if run.until.After(now) {
			inProgress += run.wildcards
		}
	}
	if inProgress+wild > 15 {
		return nil, -1, "TooManyInvalidationsInProgress"
	}
	a.running = append(a.running, cfRun{now.Add(a.inProgress), wild})
	a.refs[batch.CallerReference] = true
	var ids []string
	for _, p := range batch.Paths.Items {
		if p == "/*" {
			return []string{"*"}, 0, ""
		}
		if id, ok := strings.CutPrefix(p, "/"); ok && !strings.Contains(id, "/") {
			ids = append(ids, strings.TrimSuffix(id, "*"))
		} else if !strings.HasPrefix(p, "/u/") && !strings.HasPrefix(p, "/embed/") {
			return nil, http.StatusBadRequest, "path " + p
		}
	}
	return ids, 0, ""
}

// checkSigV4 checks the request's SigV4 signature as AWS does: the
// headers it names signed again with the test's credentials
// (AKIDEXAMPLE, "secret") at the time it says, for the service
// cloudfront in us-east-1. It returns why it does not hold, or "".
func checkSigV4(r *http.Request, body []byte) string {
	auth := r.Header.Get("Authorization")
	const scheme = "AWS4-HMAC-SHA256 "
	if !strings.HasPrefix(auth, scheme) {
		return "unsigned"
	}
	at, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil {
		return "no X-Amz-Date"
	}
	var signed []string
	for _, part := range strings.Split(strings.TrimPrefix(auth, scheme), ", ") {
		if v, ok := strings.CutPrefix(part, "SignedHeaders="); ok {
			signed = strings.Split(v, ";")
		}
	}
	again, _ := http.NewRequest(r.Method, "http://"+r.Host+r.URL.RequestURI(), bytes.NewReader(body))
	for _, h := range signed {
		if h != "host" {
			again.Header.Set(h, r.Header.Get(h))
		}
	}
	sum := sha256.Sum256(body)
	creds := aws.Credentials{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "secret"}
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, again, hex.EncodeToString(sum[:]), "cloudfront", "us-east-1", at); err != nil {
		return err.Error()
	}
	if again.Header.Get("Authorization") != auth {
		return "SignatureDoesNotMatch"
	}
	return ""
}

// newCloudFrontServer serves a's API, answering as CloudFront does.
func newCloudFrontServer(t *testing.T, a *cloudFrontAPI) *cdnServer {
	t.Helper()
	a.refs = map[string]bool{}
	c := &cdnServer{}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		c.mu.Lock()
		defer c.mu.Unlock()
		ids, status, msg := a.check(r, body)
		w.Header().Set("Content-Type", "text/xml")
		switch {
		case status == -1:
			c.refused = append(c.refused, msg)
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `<?xml version="1.0"?><ErrorResponse xmlns="http://cloudfront.amazonaws.com/doc/2020-05-31/"><Error><Type>Sender</Type><Code>TooManyInvalidationsInProgress</Code><Message>%s</Message></Error><RequestId>r1</RequestId></ErrorResponse>`, msg)
			return
		case status != 0:
			c.refused = append(c.refused, msg)
			w.WriteHeader(status)
			fmt.Fprintf(w, `<?xml version="1.0"?><ErrorResponse xmlns="http://cloudfront.amazonaws.com/doc/2020-05-31/"><Error><Type>Sender</Type><Code>InvalidArgument</Code><Message>%s</Message></Error><RequestId>r1</RequestId></ErrorResponse>`, msg)
			return
		}
		if ids != nil {
			c.purged = append(c.purged, ids)
		}
		w.Header().Set("Location", c.URL+"/2020-05-31/distribution/"+a.dist+"/invalidation/I1")
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `<?xml version="1.0"?><Invalidation xmlns="http://cloudfront.amazonaws.com/doc/2020-05-31/"><Id>I1</Id><Status>InProgress</Status><CreateTime>2026-12-07T00:00:00Z</CreateTime><InvalidationBatch><CallerReference>x</CallerReference><Paths><Quantity>1</Quantity><Items><Path>/*</Path></Items></Paths></InvalidationBatch></Invalidation>`)
	}))
	t.Cleanup(c.Close)
	return c
}
