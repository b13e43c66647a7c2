package edge

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"golang.org/x/time/rate"
)

// cloudflare purges a Cloudflare zone by cache tag through its API
// (POST /client/v4/zones/{zone}/purge_cache with {"tags": [...]}, or
// {"purge_everything": true}).
type cloudflare struct {
	zone, token, api string
	limits           Limits
}

// cloudflarePlans are Cloudflare's documented purge limits per plan:
// requests a second (a token bucket of Burst), 100 tags per request.
var cloudflarePlans = map[string]Limits{
	"free":       {IDs: 100, Rate: rate.Every(12 * time.Second), Burst: 25},
	"pro":        {IDs: 100, Rate: rate.Limit(5), Burst: 25},
	"business":   {IDs: 100, Rate: rate.Limit(10), Burst: 50},
	"enterprise": {IDs: 100, Rate: rate.Limit(50), Burst: 500},
}

func newCloudflare(zone, token, api, plan string) (*cloudflare, error) {
	if plan == "" {
		plan = "free"
	}
	l, ok := cloudflarePlans[plan]
	if !ok {
		return nil, fmt.Errorf("--purge cloudflare://%s: unknown plan %q (want free, pro, business or enterprise)", zone, plan)
	}
	return &cloudflare{zone: zone, token: token, api: api, limits: l}, nil
}

func (c *cloudflare) String() string { return "cloudflare zone " + c.zone }

func (c *cloudflare) Limits() Limits { return c.limits }

func (c *cloudflare) Purge(ctx context.Context, p Purge) error {
	body := map[string]any{"tags": keys(p.IDs)}
	if p.All {
		body = map[string]any{"purge_everything": true}
	}
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequest(http.MethodPost, c.api+"/client/v4/zones/"+c.zone+"/purge_cache", bytes.NewReader(data))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/json")
	return send(ctx, req, c.String())
}
