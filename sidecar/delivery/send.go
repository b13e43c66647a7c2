package delivery

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/riverqueue/river"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/guidepub/guidepub/sidecar/store"
)

// userAgent identifies guidepub's webhook requests.
const userAgent = "guidepub-webhooks/1"

// newHTTPClient builds the client attempts use: no proxy (a proxy would
// connect on our behalf and skip the address check), redirects never
// followed, every dialled address checked unless private targets are allowed.
func newHTTPClient(cfg Config) *http.Client {
	dialer := &net.Dialer{Timeout: cfg.Timeout, KeepAlive: 30 * time.Second}
	if !cfg.AllowPrivateTargets {
		dialer.Control = refusePrivate
	}
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          max(100, cfg.Workers),
		MaxIdleConnsPerHost:   cfg.Workers,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	return &http.Client{
		Transport:     tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// outcome of one attempt.
type outcome int

const (
	outcomeDelivered outcome = iota
	outcomeRetry
	outcomeDropped
)

// result is what one POST gave.
type result struct {
	status   int
	err      error
	outcome  outcome
	duration time.Duration
}

// target is what an attempt needs from guidepub_delivery.
type target struct {
	url, secret, webhookID, state string
	body                          []byte
	roundStart, attempts          int64
}

// attempt makes one attempt of delivery id and records it. Its error tells
// River what to do next (see worker.Work).
func (q *Queue) attempt(ctx context.Context, job jobArgs) error {
	id := job.DeliveryID
	var t target
	err := q.st.QueryRow(ctx, `SELECT url, secret, webhook_id, body, state, round_start,
		(SELECT COUNT(*) FROM guidepub_attempt WHERE delivery_id = ?)
		FROM guidepub_delivery WHERE id = ?`, id, id).
		Scan(&t.url, &t.secret, &t.webhookID, &t.body, &t.state, &t.roundStart, &t.attempts)
	if errors.Is(err, store.ErrNotFound) {
		return river.JobCancel(fmt.Errorf("delivery %s: %w", id, err))
	}
	if err != nil {
		return fmt.Errorf("read delivery %s: %w", id, err)
	}
	if t.roundStart != job.Round {
		// A job from before a manual re-send; the re-send's own job works
		// the delivery now.
		return nil
	}
	switch t.state {
	case StateDelivered, StateDropped, StateExhausted:
		// Recorded by an earlier run whose job did not finish (a crash
		// between the two writes): nothing more to send.
		return nil
	}
	number := t.attempts - t.roundStart + 1
	at := q.cfg.Clock.Now()
	res := q.send(ctx, t, at)
	state := StateDelivered
	switch res.outcome {
	case outcomeDropped:
		state = StateDropped
	case outcomeRetry:
		state = StateRetrying
		if number >= int64(q.cfg.MaxAttempts) {
			state = StateExhausted
		}
	}
	errText := ""
	if res.err != nil {
		errText = res.err.Error()
	}
	// Record even when the job's context ended (timeout, shutdown).
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), jobMargin)
	defer cancel()
	err = q.recorder.write(rctx, &record{
		deliveryID: id, at: at, status: res.status, errText: errText,
		duration: res.duration, state: state, updatedAt: q.cfg.Clock.Now(),
	})
	if err != nil {
		// The receiver may have the event already; the next run sends it
		// again with the same webhook-id, so it can tell.
		return fmt.Errorf("record attempt of %s: %w", id, err)
	}
	q.metrics.attempt(state, res.duration)
	log := q.cfg.Logger.With("delivery", id, "url", redactURL(t.url), "attempt", number, "status", res.status, "duration", res.duration)
	switch state {
	case StateDelivered:
		log.Info("webhook delivered")
		return nil
	case StateRetrying:
		log.Warn("webhook attempt failed, will retry", "error", errText)
		return errors.New(errText)
	case StateExhausted:
		log.Warn("webhook delivery exhausted", "error", errText, "attempts", number)
		return river.JobCancel(fmt.Errorf("exhausted after %d attempts: %s", number, errText))
	default:
		log.Warn("webhook delivery dropped", "error", errText)
		return river.JobCancel(fmt.Errorf("dropped: %s", errText))
	}
}

// send POSTs the delivery once, at time at (its webhook-timestamp), and
// classifies the answer.
func (q *Queue) send(ctx context.Context, t target, at time.Time) result {
	u, err := url.Parse(t.url)
	if err != nil {
		return result{err: fmt.Errorf("invalid webhook url: %w", err), outcome: outcomeDropped}
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return result{err: fmt.Errorf("webhook url scheme %q is not http or https", u.Scheme), outcome: outcomeDropped}
	}
	if u.Host == "" {
		return result{err: errors.New("webhook url has no host"), outcome: outcomeDropped}
	}
	ctx, cancel := context.WithTimeout(ctx, q.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(t.body))
	if err != nil {
		return result{err: fmt.Errorf("build request: %w", err), outcome: outcomeDropped}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set(standardwebhooks.HeaderWebhookID, t.webhookID)
	req.Header.Set(standardwebhooks.HeaderWebhookTimestamp, strconv.FormatInt(at.Unix(), 10))
	if t.secret != "" {
		wh, err := standardwebhooks.NewWebhook(t.secret)
		if err != nil {
			return result{err: errors.New("webhook secret is not whsec_ followed by base64"), outcome: outcomeDropped}
		}
		sig, err := wh.Sign(t.webhookID, at, t.body)
		if err != nil {
			return result{err: fmt.Errorf("sign: %w", err), outcome: outcomeDropped}
		}
		req.Header.Set(standardwebhooks.HeaderWebhookSignature, sig)
	}
	start := time.Now()
	resp, err := q.client.Do(req)
	if err == nil {
		// Only the status counts; the body is read (so the connection can
		// be reused) up to a limit and discarded.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, q.cfg.ResponseLimit))
		resp.Body.Close()
	}
	res := result{duration: time.Since(start)}
	if err != nil {
		res.err = describeTransportError(err, q.cfg.Timeout)
		res.outcome = outcomeRetry
		var addrErr *AddressError
		if errors.As(err, &addrErr) {
			res.outcome = outcomeDropped
		}
		return res
	}
	res.status = resp.StatusCode
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		res.outcome = outcomeDelivered
	case resp.StatusCode >= 500 && resp.StatusCode < 600:
		res.outcome = outcomeRetry
		res.err = fmt.Errorf("receiver answered %d", resp.StatusCode)
	default:
		res.outcome = outcomeDropped
		res.err = fmt.Errorf("receiver answered %d: dropped (only 5xx, timeouts and connection errors are retried)", resp.StatusCode)
	}
	return res
}

// redactURL returns u without user info, query and fragment, which may
// carry credentials, for logs.
func redactURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(invalid url)"
	}
	p.User, p.RawQuery, p.Fragment, p.RawFragment, p.ForceQuery = nil, "", "", "", false
	return p.String()
}

// describeTransportError turns a client error into a short message without
// the method and URL url.Error repeats.
func describeTransportError(err error, timeout time.Duration) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		if ue.Timeout() || errors.Is(ue.Err, context.DeadlineExceeded) {
			return fmt.Errorf("no answer within %s", timeout)
		}
		err = ue.Err
	}
	return err
}
