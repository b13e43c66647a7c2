package main

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// devReceiver is dev's own webhook receiver: it verifies a delivery's
// Standard Webhooks signature with the secret the guide lists for its URL,
// logs it, and answers 204.
type devReceiver struct {
	privateDir, url string
	logger          *slog.Logger
}

func (d *devReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		http.Error(w, "POST a webhook delivery here", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 8<<20))
	if err != nil {
		http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
		return
	}
	var ev struct {
		Type    string `json:"type"`
		GuideID string `json:"guideId"`
	}
	if err := json.Unmarshal(body, &ev); err != nil {
		d.logger.Warn("webhook received: body is not a JSON object", "error", err.Error())
		http.Error(w, "body is not a JSON object", http.StatusBadRequest)
		return
	}
	signature := "unsigned"
	if rec, err := readRecord(d.privateDir, ev.GuideID); err == nil {
		for _, h := range rec.Webhooks {
			if h.URL != d.url || h.Secret == "" {
				continue
			}
			signature = "invalid"
			if wh, err := standardwebhooks.NewWebhook(h.Secret); err == nil && wh.Verify(body, r.Header) == nil {
				signature = "valid"
			}
		}
	}
	d.logger.Info("webhook received", "type", ev.Type, "guide", ev.GuideID,
		"webhook-id", r.Header.Get("webhook-id"), "signature", signature, "bytes", len(body))
	w.WriteHeader(http.StatusNoContent)
}
