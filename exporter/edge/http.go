package edge

import (
	"context"
	"io"
	"net/http"
	"time"
)

// requestTimeout bounds one purge request.
const requestTimeout = 30 * time.Second

var httpClient = &http.Client{Timeout: requestTimeout}

// send sends req and returns what answer makes of its response, reading
// at most 64 KiB of its body.
func send(ctx context.Context, req *http.Request, what string) error {
	resp, err := httpClient.Do(req.WithContext(ctx))
	if err != nil {
		return unreachable(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return answer(resp, body, what)
}
