// Command guidepub publishes measured floor-plan data as a static site plus a
// small sidecar. See README.md, or run "guidepub --help".
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/guidepub/guidepub/site/config"
)

// Exit statuses: 0 all went well, 1 a bundle was rejected or the command
// failed, 2 bad usage (see docs/cli.md, "Exit status").
const (
	exitFailure = 1
	exitUsage   = 2
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args, os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

// run builds the command-line application and runs it with args; tests call
// it directly. It returns the first error of the command, a *usageError for
// bad usage.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return newApp(stdout, stderr).RunContext(ctx, args)
}

// usageError marks an error as the user's mistake in calling guidepub.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// usagef returns a *usageError.
func usagef(format string, a ...any) error { return &usageError{fmt.Errorf(format, a...)} }

// exitCode maps err to the process exit status, printing it to stderr:
// a *usageError is exitUsage, any other error exitFailure. Commands only
// return errors; this is the one place that turns them into statuses.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	var ue *usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(stderr, "guidepub: %v\nRun 'guidepub --help' for usage.\n", err)
		return exitUsage
	}
	fmt.Fprintf(stderr, "guidepub: %v\n", err)
	return exitFailure
}

// validConfig turns the *config.FieldErrors of a Config.Validate into a
// *usageError (the flags set the fields) naming the flag of each field,
// and nil into nil.
func validConfig(err error) error {
	if err == nil {
		return nil
	}
	var msgs []string
	for _, fe := range config.Fields(err) {
		name := fe.Field
		if f, ok := fieldFlags[fe.Field]; ok {
			name = f
		}
		msgs = append(msgs, name+": "+fe.Problem)
	}
	if len(msgs) == 0 {
		return &usageError{err}
	}
	return &usageError{&flagsError{msg: strings.Join(msgs, "; "), err: err}}
}

// flagsError says which flags' values a Config refused; it wraps the
// Config's *config.FieldErrors.
type flagsError struct {
	msg string
	err error
}

func (e *flagsError) Error() string { return e.msg }
func (e *flagsError) Unwrap() error { return e.err }

// fieldFlags names the flag that sets a Config field, for messages.
var fieldFlags = map[string]string{
	"RetryMin": "--retry-min", "RetryMax": "--retry-max", "MaxAttempts": "--max-attempts",
	"Timeout": "--delivery-timeout", "Workers": "--delivery-workers", "RateLimit": "--rate-limit",
	"SigningKeys": "--signing-key", "Jobs": "--jobs", "MaxDeletes": "--max-deletes",
	"CacheBytes": "--cache-bytes", "SmallFileLimit": "--small-file-limit", "Debounce": "--debounce", "Poll": "--poll",
	"Encodings": "--encodings", "Encoding": "--encoding", "Shard": "--shard",
	"ViewURL": "--view-url", "UnbrandedURL": "--unbranded-url", "EmbedURL": "--embed-url",
	"BaseURL": "--base-url", "SourceName": "--source-name",
	"ReadHeaderTimeout": "--read-header-timeout", "ReadTimeout": "--read-timeout", "WriteTimeout": "--write-timeout",
	"IdleTimeout": "--idle-timeout", "MaxBodyBytes": "--max-body-bytes",
}
