package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/urfave/cli/v2"
)

// healthcheckCommand returns the "healthcheck" command: it asks a running
// sidecar, serve or dev for /healthz, so that a container image needs no
// second binary (such as wget) for its HEALTHCHECK.
func healthcheckCommand() *cli.Command {
	return &cli.Command{
		Name:  "healthcheck",
		Usage: "exit 0 when the server at --addr answers /healthz with 200, 1 otherwise",
		Description: `Asks http://<addr>/healthz, where addr is the --addr the server listens on
(GUIDEPUB_ADDR, so in a container the same variable configures both). A
listen address without a host (":8080") or with an unspecified one
("0.0.0.0:8080", "[::]:8080") is asked on 127.0.0.1.

Examples:
   guidepub healthcheck --addr 127.0.0.1:8081
   GUIDEPUB_ADDR=:8080 guidepub healthcheck`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "addr", Value: "127.0.0.1:8081", EnvVars: envVars("addr"), Usage: "HOST:PORT the server listens on"},
			&cli.DurationFlag{Name: "timeout", Value: 4 * time.Second, EnvVars: envVars("healthcheck-timeout"), Usage: "give up after this long"},
		},
		Action: runHealthcheck,
	}
}

func runHealthcheck(c *cli.Context) error {
	target, err := healthURL(c.String("addr"))
	if err != nil {
		return usagef("--addr: %v", err)
	}
	if c.Duration("timeout") <= 0 {
		return usagef("--timeout must be positive")
	}
	ctx, cancel := context.WithTimeout(c.Context, c.Duration("timeout"))
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return err
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("health check: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("health check: %s answered %s", target, resp.Status)
	}
	fmt.Fprintf(c.App.Writer, "%s: %s\n", target, resp.Status)
	return nil
}

// healthURL turns a listen address into the URL of its /healthz.
func healthURL(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", err
	}
	if port == "" {
		return "", fmt.Errorf("%q has no port", addr)
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/healthz", nil
}
