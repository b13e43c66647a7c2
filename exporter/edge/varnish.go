package edge

import (
	"context"
	"net/http"
	"strings"

	"golang.org/x/time/rate"

	"github.com/guidepub/guidepub/site"
)

// varnish purges a Varnish cache running the VCL `guidepub serve
// --print-config varnish` prints: PURGE / with the keys in xkey-purge, or
// with xkey-purge-all for everything.
type varnish struct{ base string }

func newVarnish(base string) *varnish { return &varnish{base: base} }

func (v *varnish) String() string { return "varnish at " + v.base }

// Limits: one request names up to 256 keys (a header of about 8 KiB,
// within Varnish's default http_req_hdr_len); Varnish sets no rate.
func (v *varnish) Limits() Limits { return Limits{IDs: 256, Rate: rate.Limit(100), Burst: 100} }

func (v *varnish) Purge(ctx context.Context, p Purge) error {
	req, err := http.NewRequest("PURGE", v.base+"/", nil)
	if err != nil {
		return err
	}
	if p.All {
		req.Header.Set("xkey-purge-all", "1")
	} else {
		req.Header.Set("xkey-purge", strings.Join(keys(p.IDs), " "))
	}
	return send(ctx, req, v.String())
}

// keys returns the surrogate keys of ids.
func keys(ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = site.SurrogateKey(id)
	}
	return out
}
