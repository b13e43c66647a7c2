package edge

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/config"
	"golang.org/x/time/rate"

	"github.com/guidepub/guidepub/site"
)

// cloudFront invalidates paths of a CloudFront distribution through its
// API (CreateInvalidation, REST-XML, version 2020-05-31), with the AWS
// SDK's credential chain and its SigV4 signer. The SDK's generated
// CloudFront client is not used: it added 4 MB to the binary, and the
// container image's size is a goal (docs/container.md), for one call.
//
// CloudFront has no keys: each public id is three wildcard paths, its
// folder (documents, media, the branded page) and its unbranded and
// embedded pages; everything is "/*". Each path is billed past the free
// monthly allowance, and at most 15 wildcard paths may be in progress at
// once, so a request names at most five ids and one refused as too many in
// progress is sent again half a minute later.
type cloudFront struct {
	dist, endpoint string
	creds          aws.CredentialsProvider
	signer         *v4.Signer
}

// cloudFrontBusy is how long to wait when too many invalidations are in
// progress (they take from seconds to a few minutes).
var cloudFrontBusy = 30 * time.Second

// cloudFrontRegion is where CloudFront's API signs requests: it is global.
const cloudFrontRegion = "us-east-1"

func newCloudFront(ctx context.Context, dist, endpoint string) (*cloudFront, error) {
	cfg, err := config.LoadDefaultConfig(ctx, config.WithRegion(cloudFrontRegion))
	if err != nil {
		return nil, fmt.Errorf("--purge cloudfront://%s: AWS configuration: %w", dist, err)
	}
	if endpoint == "" {
		endpoint = "https://cloudfront.amazonaws.com"
	}
	return &cloudFront{dist: dist, endpoint: strings.TrimSuffix(endpoint, "/"), creds: cfg.Credentials, signer: v4.NewSigner()}, nil
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

// invalidationBatch is CreateInvalidation's request body.
type invalidationBatch struct {
	XMLName         xml.Name `xml:"http://cloudfront.amazonaws.com/doc/2020-05-31/ InvalidationBatch"`
	CallerReference string   `xml:"CallerReference"`
	Paths           struct {
		Quantity int      `xml:"Quantity"`
		Items    []string `xml:"Items>Path"`
	} `xml:"Paths"`
}

// cloudFrontError is the body of a refused request.
type cloudFrontError struct {
	Code    string `xml:"Error>Code"`
	Message string `xml:"Error>Message"`
}

func (c *cloudFront) Purge(ctx context.Context, p Purge) error {
	batch := invalidationBatch{CallerReference: "guidepub-" + p.Ref}
	batch.Paths.Items = cloudFrontPaths(p)
	batch.Paths.Quantity = len(batch.Paths.Items)
	body, err := xml.Marshal(batch)
	if err != nil {
		return err
	}
	body = append([]byte(xml.Header), body...)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint+"/2020-05-31/distribution/"+c.dist+"/invalidation", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "text/xml")
	creds, err := c.creds.Retrieve(ctx)
	if err != nil {
		return fmt.Errorf("%s: AWS credentials: %w", c, err)
	}
	sum := sha256.Sum256(body)
	if err := c.signer.SignHTTP(ctx, creds, req, hex.EncodeToString(sum[:]), "cloudfront", cloudFrontRegion, time.Now()); err != nil {
		return err
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return unreachable(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var refusal cloudFrontError
	if resp.StatusCode == http.StatusBadRequest && xml.Unmarshal(data, &refusal) == nil && refusal.Code == "TooManyInvalidationsInProgress" {
		return &RetryError{After: cloudFrontBusy, Err: fmt.Errorf("%s: too many invalidations in progress", c)}
	}
	return answer(resp, data, c.String())
}
