package edge

import (
	"context"
	"net/http"
	"strings"

	"golang.org/x/time/rate"
)

// fastly purges a Fastly service through its API: a batch purge of up to
// 256 surrogate keys (POST /service/{id}/purge, the keys in the
// Surrogate-Key header), or purge_all.
type fastly struct{ service, token, api string }

func newFastly(service, token, api string) *fastly {
	return &fastly{service: service, token: token, api: api}
}

func (f *fastly) String() string { return "fastly service " + f.service }

// Limits: Fastly's batch purge takes 256 keys; its API rate-limits purges
// loosely, so ten requests a second, and its 429s are waited for.
func (f *fastly) Limits() Limits { return Limits{IDs: 256, Rate: rate.Limit(10), Burst: 10} }

func (f *fastly) Purge(ctx context.Context, p Purge) error {
	path := "/service/" + f.service + "/purge"
	if p.All {
		path += "_all"
	}
	req, err := http.NewRequest(http.MethodPost, f.api+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Fastly-Key", f.token)
	req.Header.Set("Accept", "application/json")
	if !p.All {
		req.Header.Set("Surrogate-Key", strings.Join(keys(p.IDs), " "))
	}
	return send(ctx, req, f.String())
}
