package store

import (
	"context"
	"log/slog"
	"strings"
)

// RiverLogger returns the logger River's client and migrator log through:
// logger, with River's routine messages moved to debug level.
func RiverLogger(logger *slog.Logger) *slog.Logger {
	return slog.New(riverLogHandler{logger.Handler()}).With("component", "river")
}

// riverLogHandler is the slog handler River logs through. River's routine
// messages (migrations, "poll only mode", producer and job statistics) are
// moved to debug level; so are its reports of a job that returned an
// error, since guidepub logs every failed attempt itself, once, with the
// delivery's id and target. River's warnings and errors about itself (a
// stuck job, a lost database connection) keep their level.
type riverLogHandler struct{ inner slog.Handler }

// riverLevel is the level a River record is logged at.
func riverLevel(r slog.Record) slog.Level {
	switch {
	case r.Level < slog.LevelWarn:
		return slog.LevelDebug
	case strings.Contains(r.Message, ": Job errored"):
		return slog.LevelDebug
	}
	return r.Level
}

func (h riverLogHandler) Enabled(ctx context.Context, level slog.Level) bool {
	// Below Warn every record is demoted to Debug. From Warn up the message
	// decides (riverLevel); Handle checks the final level.
	if level < slog.LevelWarn {
		level = slog.LevelDebug
	}
	return h.inner.Enabled(ctx, level)
}

func (h riverLogHandler) Handle(ctx context.Context, r slog.Record) error {
	r.Level = riverLevel(r)
	if !h.inner.Enabled(ctx, r.Level) {
		return nil
	}
	return h.inner.Handle(ctx, r)
}

func (h riverLogHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return riverLogHandler{h.inner.WithAttrs(attrs)}
}

func (h riverLogHandler) WithGroup(name string) slog.Handler {
	return riverLogHandler{h.inner.WithGroup(name)}
}
