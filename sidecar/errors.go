package sidecar

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/guidepub/guidepub/sidecar/delivery"
	"github.com/guidepub/guidepub/sidecar/store"
)

// Error codes of the Portal API error body {"code", "message"}.
const (
	CodeUnauthenticated    = "unauthenticated"
	CodePermissionDenied   = "permission_denied"
	CodeInvalidArgument    = "invalid_argument"
	CodeNotFound           = "not_found"
	CodeFailedPrecondition = "failed_precondition"
	CodeResourceExhausted  = "resource_exhausted"
	CodeInternal           = "internal"
)

// apiError is an error with the HTTP status and body the client sees. The
// wrapped err, if any, is logged and never sent.
type apiError struct {
	status     int
	code       string
	message    string
	retryAfter int // seconds, for 429
	// bearerError is the RFC 6750 §3.1 error code of the challenge sent
	// with a 400 about how a bearer token was sent, or with a 403 for a
	// bearer token without the scope in bearerScope.
	bearerError, bearerScope string
	err                      error
}

func (e *apiError) Error() string {
	if e.err != nil {
		return fmt.Sprintf("%s: %s: %v", e.code, e.message, e.err)
	}
	return e.code + ": " + e.message
}

func (e *apiError) Unwrap() error { return e.err }

// Errors that carry only a code: the Portal API's 401 and 403 bodies are
// {code} (docs/sidecar.md#errors), and they must not say what exactly was
// wrong.
var (
	errUnauthenticated  = &apiError{status: http.StatusUnauthorized, code: CodeUnauthenticated}
	errPermissionDenied = &apiError{status: http.StatusForbidden, code: CodePermissionDenied}
)

// errInsufficientScope is the 403 of a token without scope. Sent as a
// bearer token, it is answered with RFC 6750 §3.1's insufficient_scope
// challenge naming the scope.
func errInsufficientScope(scope string) error {
	return &apiError{status: http.StatusForbidden, code: CodePermissionDenied, bearerError: "insufficient_scope", bearerScope: scope}
}

func notFound(msg string) error {
	return &apiError{status: http.StatusNotFound, code: CodeNotFound, message: msg}
}

func invalidArgument(status int, msg string) error {
	return &apiError{status: status, code: CodeInvalidArgument, message: msg}
}

// errorBody is the JSON body of every error response.
type errorBody struct {
	Code    string `json:"code"`
	Message string `json:"message,omitempty"`
}

// writeError is the one place that turns an error into a status and a body.
// Errors that are not an *apiError or a known sentinel become 500 internal;
// their text is logged, never sent.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var ae *apiError
	switch {
	case errors.As(err, &ae):
	case errors.Is(err, ErrGuideNotFound):
		ae = &apiError{status: http.StatusNotFound, code: CodeNotFound, message: "no guide with this id"}
	case errors.Is(err, ErrNotReady):
		ae = &apiError{status: http.StatusNotFound, code: CodeNotFound, message: "the guide is not ready: it has no ready event yet"}
	case errors.Is(err, delivery.ErrNotRetryable):
		ae = &apiError{status: http.StatusConflict, code: CodeFailedPrecondition, message: "only a dropped or exhausted delivery can be retried"}
	case errors.Is(err, delivery.ErrNotFound), errors.Is(err, store.ErrNotFound):
		ae = &apiError{status: http.StatusNotFound, code: CodeNotFound, message: "no such delivery for this guide"}
	default:
		level := slog.LevelError
		if errors.Is(err, context.Canceled) {
			level = slog.LevelInfo // the client went away
		}
		s.logger.Log(r.Context(), level, "request failed", "method", r.Method, "route", r.Pattern, "err", err)
		ae = &apiError{status: http.StatusInternalServerError, code: CodeInternal, message: "internal error"}
	}
	if ae.err != nil {
		s.logger.Warn("request error", "method", r.Method, "route", r.Pattern, "code", ae.code, "err", ae.err)
	}
	if ae.retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(ae.retryAfter))
	}
	if _, bearer := bearerToken(r); ae.status == http.StatusUnauthorized || (bearer && ae.bearerError != "") {
		w.Header().Set("WWW-Authenticate", challenge(r, ae))
	}
	writeJSON(w, ae.status, errorBody{Code: ae.code, Message: ae.message})
}

// challenge is the WWW-Authenticate value of a 401 (RFC 9110 §15.5.2
// requires one) or of ae's RFC 6750 §3.1 error: the Bearer scheme of RFC
// 6750, the one standard scheme the Portal API takes. Its error attribute
// is ae's, or invalid_token for a 401 when the request carried a bearer
// token; a request that sent none gets no error attribute (RFC 6750 §3.1).
func challenge(r *http.Request, ae *apiError) string {
	code := ae.bearerError
	if _, sent := bearerToken(r); sent && code == "" {
		code = "invalid_token"
	}
	if code == "" {
		return `Bearer realm="guidepub"`
	}
	c := `Bearer realm="guidepub", error="` + code + `"`
	if ae.bearerScope != "" {
		c += `, scope="` + ae.bearerScope + `"`
	}
	return c
}
