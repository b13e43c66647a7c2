package sidecar

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/guidepub/guidepub/sidecar/apitoken"
	"github.com/guidepub/guidepub/sidecar/delivery"
	"github.com/guidepub/guidepub/sidecar/privatetree"
	"github.com/guidepub/guidepub/sidecar/store"
	"github.com/guidepub/guidepub/site/openapi"
)

// Server is the sidecar's HTTP handler: /api/v1/... (with the OpenAPI
// document at /api/v1/openapi.json), /private/..., /healthz, /readyz and
// /metrics. It is safe for concurrent use.
type Server struct {
	cfg     Config
	root    privatetree.Tree
	store   *store.Store
	queue   *delivery.Queue
	events  *Events
	logger  *slog.Logger
	now     func() time.Time
	handler http.Handler

	creds    *credentialCache
	limits   *rateLimits
	etags    *etagCache
	metrics  *metrics
	dummyKey []byte // compared against when an app id is unknown
	openapi  []byte // the OpenAPI document served at openapi.Path
}

var _ http.Handler = (*Server)(nil)

// New returns the sidecar's HTTP handler. st holds the credentials, q the
// deliveries, ev the ready events (all required). It returns an error for an
// invalid cfg or when the metrics cannot be registered.
func New(cfg Config, st *store.Store, q *delivery.Queue, ev *Events) (*Server, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if st == nil || q == nil || ev == nil {
		return nil, errors.New("sidecar: New needs a store, a queue and events")
	}
	m, err := newMetrics(cfg.Registerer)
	if err != nil {
		return nil, err
	}
	dummy := sha256.Sum256([]byte("guidepub: no such app"))
	s := &Server{
		cfg:      cfg,
		root:     cfg.root(),
		store:    st,
		queue:    q,
		events:   ev,
		logger:   cfg.Logger,
		now:      cfg.Clock.Now,
		creds:    newCredentialCache(st, cfg.TokenCacheTTL, cfg.Clock.Now),
		limits:   newRateLimits(cfg.RateLimit, cfg.Burst, cfg.Clock.Now),
		etags:    newETagCache(),
		metrics:  m,
		dummyKey: dummy[:],
		openapi:  openapi.Document(),
	}
	mux := http.NewServeMux()
	s.routes(mux)
	s.handler = s.observe(s.CleanPaths(mux))
	cfg.Logger.Info("sidecar ready", "baseUrl", cfg.BaseURL, "viewUrl", cfg.ViewURL, "private", s.root.String(),
		"rateLimit", cfg.RateLimit, "burst", cfg.Burst)
	return s, nil
}

// route is one endpoint of the sidecar: a method (GET also answers HEAD),
// a path pattern and its handler.
type route struct {
	method, path string
	h            http.Handler
}

// routeTable returns every endpoint: the Portal API, the private
// documents, the operations endpoints and, when configured, the OAuth
// authorization server's.
func (s *Server) routeTable() []route {
	events := apitoken.ScopeEvents
	rt := []route{
		{"POST", "/api/v1/integrations/test", s.authenticated("", s.handleIntegrationTest)},
		{"GET", "/api/v1/guides/{guideId}/events/{eventType}/object", s.authenticated(events, s.handleEventObject)},
		{"POST", "/api/v1/guides/{guideId}/events/{eventType}/dispatch", s.authenticated(events, s.handleDispatch)},
		{"GET", "/api/v1/guides/{guideId}/events/deliveries", s.authenticated(events, s.handleDeliveries)},
		{"POST", "/api/v1/guides/{guideId}/events/deliveries/{deliveryId}/retry", s.authenticated(events, s.handleRetry)},
		{"GET", "/private/{guideId}/{path...}", http.HandlerFunc(s.handlePrivate)},
		{"GET", "/healthz", http.HandlerFunc(s.handleHealthz)},
		{"GET", "/readyz", http.HandlerFunc(s.handleReadyz)},
		{"GET", "/metrics", promhttp.HandlerFor(s.cfg.Gatherer, promhttp.HandlerOpts{})},
		{"GET", openapi.Path, http.HandlerFunc(s.handleOpenAPI)},
	}
	if s.cfg.OAuth != nil {
		for _, o := range s.cfg.OAuth.Routes() {
			rt = append(rt, route{o.Method, o.Path, o.Handler})
		}
	}
	return rt
}

// routes registers every endpoint of routeTable with its method, and each
// path once more without one, to answer the other methods with a JSON 405
// whose Allow lists the path's methods.
func (s *Server) routes(mux *http.ServeMux) {
	table := s.routeTable()
	allowed := map[string][]string{}
	var paths []string
	for _, rt := range table {
		mux.Handle(rt.method+" "+rt.path, rt.h)
		if allowed[rt.path] == nil {
			paths = append(paths, rt.path)
		}
		allowed[rt.path] = append(allowed[rt.path], rt.method)
	}
	for _, p := range paths {
		mux.Handle(p, s.methodNotAllowed(allowed[p]))
	}
	mux.HandleFunc("/", s.handleUnknownPath)
}

// ServeHTTP answers one request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// Ready reports whether the store answers: what /readyz shows. It returns
// the store's error when it does not.
func (s *Server) Ready(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if _, err := s.store.Token(ctx, readinessProbeID); err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	return nil
}

// readinessProbeID is looked up to check that the store answers; no app has
// it (app ids start with apitoken.AppIDPrefix).
const readinessProbeID = "readiness-probe"

func (s *Server) handleHealthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (s *Server) handleReadyz(w http.ResponseWriter, r *http.Request) {
	if err := s.Ready(r.Context()); err != nil {
		s.logger.Error("store not reachable", "err", err)
		writeJSON(w, http.StatusServiceUnavailable, errorBody{Code: "unavailable", Message: "store not reachable"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

// handleOpenAPI serves the OpenAPI document of every guidepub API; it needs
// no credentials.
func (s *Server) handleOpenAPI(w http.ResponseWriter, r *http.Request) {
	writeJSONBytes(w, http.StatusOK, s.openapi)
}

// CleanPaths answers a JSON 404 for a request whose path is not in clean
// form (".", ".." or "//" in it) and for "OPTIONS *", before they reach the
// mux: ServeMux would answer those with a redirect to the cleaned path,
// carrying the query (an access token) into a Location header, or with an
// empty 200. The Server applies it to its own mux; a program that puts
// another ServeMux in front of the Server must wrap that mux with it too.
func (s *Server) CleanPaths(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.RequestURI == "*" || !cleanPath(r.URL.Path) {
			s.writeError(w, r, notFound("no such endpoint"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// cleanPath reports whether p is an absolute path without empty, "." or
// ".." segments (a trailing slash is allowed).
func cleanPath(p string) bool {
	if p == "" || p[0] != '/' {
		return false
	}
	for _, seg := range strings.Split(strings.TrimSuffix(p[1:], "/"), "/") {
		if (seg == "" && p != "/") || seg == "." || seg == ".." {
			return false
		}
	}
	return true
}

func (s *Server) handleUnknownPath(w http.ResponseWriter, r *http.Request) {
	s.writeError(w, r, notFound("no such endpoint"))
}

// methodNotAllowed answers a JSON 405 whose Allow lists methods (and
// HEAD with GET, which answers it).
func (s *Server) methodNotAllowed(methods []string) http.Handler {
	allow := allowHeader(methods)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", allow)
		s.writeError(w, r, invalidArgument(http.StatusMethodNotAllowed, "method "+r.Method+" not allowed; use "+allow))
	})
}

// allowHeader is the Allow value of methods: sorted, with HEAD after GET.
func allowHeader(methods []string) string {
	m := slices.Clone(methods)
	if slices.Contains(m, "GET") && !slices.Contains(m, "HEAD") {
		m = append(m, "HEAD")
	}
	slices.Sort(m)
	return strings.Join(slices.Compact(m), ", ")
}

// requestInfo is filled in by handlers for the request log line.
type requestInfo struct{ appID string }

type requestInfoKey struct{}

// observe wraps h with what every request gets: panic recovery, metrics by
// route pattern and status, and one structured log line (none with NoRequestLog).
func (s *Server) observe(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		info := &requestInfo{}
		r = r.WithContext(context.WithValue(r.Context(), requestInfoKey{}, info))
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				s.logger.Error("panic serving request", "method", r.Method, "path", r.URL.Path, "panic", fmt.Sprint(p))
				if sw.status == 0 {
					s.writeError(sw, r, fmt.Errorf("panic: %v", p))
				}
			}
			status := sw.status
			if status == 0 {
				status = http.StatusOK
			}
			route := r.Pattern
			if route == "" {
				route = "unmatched"
			}
			elapsed := time.Since(start)
			s.metrics.requests.WithLabelValues(route, strconv.Itoa(status)).Inc()
			s.metrics.duration.WithLabelValues(route).Observe(elapsed.Seconds())
			if !s.cfg.NoRequestLog && s.logger.Enabled(r.Context(), slog.LevelInfo) {
				s.logger.LogAttrs(r.Context(), slog.LevelInfo, "request",
					slog.String("method", r.Method),
					slog.String("path", truncate(r.URL.Path, 200)),
					slog.String("route", route),
					slog.Int("status", status),
					slog.Int64("bytes", sw.bytes),
					slog.Duration("duration", elapsed),
					slog.String("appId", info.appID),
					slog.String("remote", r.RemoteAddr))
			}
		}()
		h.ServeHTTP(sw, r)
	})
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// statusWriter remembers the status and size of a response.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// metrics are the API's Prometheus collectors.
type metrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "guidepub_sidecar_requests_total",
			Help: "HTTP requests answered by the sidecar, by route pattern and status code.",
		}, []string{"route", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "guidepub_sidecar_request_duration_seconds",
			Help:    "Time to answer sidecar HTTP requests, by route pattern.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}, []string{"route"}),
	}
	for _, c := range []prometheus.Collector{m.requests, m.duration} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("sidecar: register metrics: %w", err)
		}
	}
	return m, nil
}

// writeJSON writes v as the JSON body with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Only our own types are encoded here; this cannot happen.
		buf.Reset()
		buf.WriteString(`{"code":"internal","message":"internal error"}` + "\n")
		status = http.StatusInternalServerError
	}
	writeJSONBytes(w, status, buf.Bytes())
}

func writeJSONBytes(w http.ResponseWriter, status int, b []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	w.Write(b)
}

// hasScope reports whether scopes contains want.
func hasScope(scopes []string, want string) bool {
	for _, s := range scopes {
		if strings.TrimSpace(s) == want {
			return true
		}
	}
	return false
}
