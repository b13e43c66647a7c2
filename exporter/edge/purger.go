package edge

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"golang.org/x/time/rate"
)

// Purge is what one purge request evicts.
type Purge struct {
	// All asks to evict everything guidepub published at the CDN.
	All bool
	// IDs are public ids (view ids and aliases), each evicted with every
	// file under it: its documents, pages in every form and language,
	// media, and the answers given for its missing files.
	IDs []string
	// Ref names this purge: the same for each try of the same entries,
	// different for any other (CloudFront's caller reference, which makes
	// a request sent twice one invalidation).
	Ref string
}

// Purger sends purges to one CDN.
type Purger interface {
	// Purge evicts p. It returns a *RetryError when the CDN asks to be
	// asked again later (429, a 5xx, too many invalidations in progress)
	// or cannot be reached, and another error when it refused the request
	// (credentials, a wrong service or zone).
	Purge(ctx context.Context, p Purge) error
	// Limits returns the CDN's documented limits.
	Limits() Limits
	// String names the CDN and its service for logs ("fastly service
	// SU1Z0isxPaozGVKXdv0eY").
	String() string
}

// Limits are what one CDN accepts.
type Limits struct {
	// IDs is the most public ids one request may name.
	IDs int
	// Rate and Burst bound the requests sent (a token bucket).
	Rate  rate.Limit
	Burst int
}

// RetryError is the error of a purge the CDN did not take but may later:
// it is sent again after After (0: the queue's backoff decides).
type RetryError struct {
	After time.Duration
	Err   error
}

func (e *RetryError) Error() string { return e.Err.Error() }
func (e *RetryError) Unwrap() error { return e.Err }

// Parse returns the Purger a --purge URL names:
//
//	varnish+http://HOST:PORT     Varnish with the xkey vmod, configured by
//	                             `guidepub serve --print-config varnish`
//	cloudfront://DISTRIBUTION_ID CloudFront invalidations (AWS credentials
//	                             from the SDK's usual environment)
//	fastly://SERVICE_ID          Fastly (FASTLY_API_TOKEN)
//	cloudflare://ZONE_ID         Cloudflare (CLOUDFLARE_API_TOKEN); ?plan=
//	                             free (default), pro, business or
//	                             enterprise sets the rate limit
//
// The vendor URLs take ?endpoint=URL to send the API requests elsewhere
// (a proxy, or a test server). getenv reads the credentials. It returns
// an error naming what is wrong with raw.
func Parse(raw string, getenv func(string) string) (Purger, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("--purge %q: %w", raw, err)
	}
	q := u.Query()
	switch u.Scheme {
	case "varnish+http", "varnish+https":
		if u.Host == "" {
			return nil, fmt.Errorf("--purge %q: want varnish+http://HOST:PORT", raw)
		}
		return newVarnish(strings.TrimPrefix(u.Scheme, "varnish+") + "://" + u.Host), nil
	case "fastly":
		token := getenv("FASTLY_API_TOKEN")
		if u.Host == "" || token == "" {
			return nil, fmt.Errorf("--purge %q: want fastly://SERVICE_ID with FASTLY_API_TOKEN set", raw)
		}
		return newFastly(u.Host, token, endpoint(q, "https://api.fastly.com")), nil
	case "cloudflare":
		token := getenv("CLOUDFLARE_API_TOKEN")
		if u.Host == "" || token == "" {
			return nil, fmt.Errorf("--purge %q: want cloudflare://ZONE_ID with CLOUDFLARE_API_TOKEN set", raw)
		}
		return newCloudflare(u.Host, token, endpoint(q, "https://api.cloudflare.com"), q.Get("plan"))
	case "cloudfront":
		if u.Host == "" {
			return nil, fmt.Errorf("--purge %q: want cloudfront://DISTRIBUTION_ID", raw)
		}
		return newCloudFront(context.Background(), strings.ToUpper(u.Host), q.Get("endpoint"))
	}
	return nil, fmt.Errorf("--purge %q: unknown CDN %q (want varnish+http, cloudfront, fastly or cloudflare)", raw, u.Scheme)
}

func endpoint(q url.Values, def string) string {
	if e := q.Get("endpoint"); e != "" {
		return strings.TrimSuffix(e, "/")
	}
	return def
}

// answer returns nil for a 2xx answer, a *RetryError for 429 and 5xx
// (with the Retry-After it gives), and an error quoting the start of the
// body for any other.
func answer(resp *http.Response, body []byte, what string) error {
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return nil
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return &RetryError{After: retryAfter(resp.Header.Get("Retry-After")),
			Err: fmt.Errorf("%s answered %s", what, resp.Status)}
	}
	msg := strings.TrimSpace(string(body))
	if len(msg) > 200 {
		msg = msg[:200] + "…"
	}
	return fmt.Errorf("%s refused the purge: %s: %s", what, resp.Status, msg)
}

// retryAfter reads a Retry-After value in seconds (0 when absent or a
// date: the backoff decides).
func retryAfter(v string) time.Duration {
	if s, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && s > 0 {
		return time.Duration(min(s, 3600)) * time.Second
	}
	return 0
}

// unreachable wraps a failed request: a CDN that cannot be reached is
// asked again.
func unreachable(err error) error {
	if errors.Is(err, context.Canceled) {
		return err
	}
	return &RetryError{Err: err}
}
