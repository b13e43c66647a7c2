package edge

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/cloudfront"
	cftypes "github.com/aws/aws-sdk-go-v2/service/cloudfront/types"
	"github.com/aws/smithy-go"
	"golang.org/x/time/rate"

	"github.com/guidepub/guidepub/site"
)

// cloudFront invalidates paths of a CloudFront distribution with the AWS
// SDK. CloudFront has no keys: each public id is three wildcard paths, its
// folder (documents, media, the branded page) and its unbranded and
// embedded pages; everything is "/*". Each path is billed past the free
// monthly allowance, and at most 15 wildcard paths may be in progress at
// once, so a request names at most five ids and one refused as too many in
// progress is sent again half a minute later.
type cloudFront struct {
	dist   string
	client *cloudfront.Client
}

// cloudFrontBusy is how long to wait when too many invalidations are in
// progress (they take from seconds to a few minutes).
var cloudFrontBusy = 30 * time.Second

func newCloudFront(ctx context.Context, dist, endpoint string) (*cloudFront, error) {
	cfg, err := config.LoadDefaultConfig(ctx, config.WithRegion("us-east-1"))
	if err != nil {
		return nil, fmt.Errorf("--purge cloudfront://%s: AWS configuration: %w", dist, err)
	}
	client := cloudfront.NewFromConfig(cfg, func(o *cloudfront.Options) {
		// The queue retries, after the wait CloudFront's answer asks for.
		o.Retryer = aws.NopRetryer{}
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	})
	return &cloudFront{dist: dist, client: client}, nil
}

func (c *cloudFront) String() string { return "cloudfront distribution " + c.dist }

// Limits: five ids (fifteen wildcard paths) a request, one request a
// second.
func (c *cloudFront) Limits() Limits { return Limits{IDs: 5, Rate: rate.Limit(1), Burst: 5} }

// cloudFrontPaths returns the paths that invalidate p.
func cloudFrontPaths(p Purge) []string {
	if p.All {
		return []string{"/*"}
	}
	var paths []string
	for _, id := range p.IDs {
		paths = append(paths, "/"+id+"*", "/"+site.UnbrandedDir+"/"+id+"*", "/"+site.EmbedDir+"/"+id+"*")
	}
	return paths
}

func (c *cloudFront) Purge(ctx context.Context, p Purge) error {
	paths := cloudFrontPaths(p)
	_, err := c.client.CreateInvalidation(ctx, &cloudfront.CreateInvalidationInput{
		DistributionId: aws.String(c.dist),
		InvalidationBatch: &cftypes.InvalidationBatch{
			CallerReference: aws.String("guidepub-" + p.Ref),
			Paths:           &cftypes.Paths{Quantity: aws.Int32(int32(len(paths))), Items: paths},
		},
	})
	var busy *cftypes.TooManyInvalidationsInProgress
	switch {
	case err == nil:
		return nil
	case errors.As(err, &busy):
		return &RetryError{After: cloudFrontBusy, Err: fmt.Errorf("%s: too many invalidations in progress", c)}
	case errors.Is(err, context.Canceled):
		return err
	}
	var api smithy.APIError
	if errors.As(err, &api) && api.ErrorFault() == smithy.FaultClient {
		return fmt.Errorf("%s refused the invalidation: %w", c, err)
	}
	return &RetryError{Err: fmt.Errorf("%s: %w", c, err)}
}
