package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/urfave/cli/v2"
)

// healthcheckAddr is healthcheck's default --addr: dev's (what make run
// starts), so that it reaches dev without a flag.
const healthcheckAddr = "127.0.0.1:8080"

// healthcheckCommand returns the "healthcheck" command: it asks a running
// sidecar or dev for /healthz (serve has none), so that a container image
// needs no second binary (such as wget) for its HEALTHCHECK.
func healthcheckCommand() *cli.Command {
	return &cli.Command{
		Name:  "healthcheck",
		Usage: "exit 0 when the sidecar or dev at --addr answers /healthz with 200, 1 otherwise",
		Description: `Asks http://<addr>/healthz, where addr is the --addr the sidecar or dev
listens on (GUIDEPUB_ADDR, so in a container the same variable configures
both). A listen address without a host (":8080") or with an unspecified one
("0.0.0.0:8080", "[::]:8080") is asked on 127.0.0.1.

The default, ` + healthcheckAddr + `, is where dev (make run) listens by default. A
sidecar started without --addr listens on 127.0.0.1:8081: ask it with
--addr 127.0.0.1:8081. serve has no /healthz.

Examples:
   guidepub healthcheck                          # dev, as make run starts it
   guidepub healthcheck --addr 127.0.0.1:8081    # a sidecar on its default address
   GUIDEPUB_ADDR=:8080 guidepub healthcheck`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "addr", Value: healthcheckAddr, EnvVars: envVars("addr"), Usage: "HOST:PORT the sidecar or dev listens on"},
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
