package sidecar

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/maypok86/otter/v2"

	"github.com/guidepub/guidepub/sidecar/authtoken"
	"github.com/guidepub/guidepub/sidecar/delivery"
	"github.com/guidepub/guidepub/sidecar/privatetree"
	"github.com/guidepub/guidepub/sidecar/store"
	"github.com/guidepub/guidepub/site"
)

// Errors of Events. The Portal API answers both with 404 not_found.
var (
	// ErrGuideNotFound: no guide with that id is published (no record.json).
	ErrGuideNotFound = errors.New("guide not found")
	// ErrNotReady: the guide is published but its default view is not
	// ready, so it has no ready event (no event.json).
	ErrNotReady = errors.New("guide is not ready")
)

// Events reads ready events from the private tree, adds a fresh authtoken,
// and queues their deliveries. It is safe for concurrent use.
type Events struct {
	root   privatetree.Tree
	queue  *delivery.Queue
	signer *authtoken.Signer
	logger *slog.Logger
	now    func() time.Time

	cache *otter.Cache[string, *guide] // by guide id, within eventCacheBytes
}

// eventCacheBytes bounds the guides Events keeps read, by an estimate of
// their memory (guide.weight): about 1,400 guides of the samples' size. A
// guide not kept costs a read and a decode of its two files, which every
// lookup but the Portal's event object stats anyway.
const eventCacheBytes = 32 << 20

// newGuideCache returns an empty cache of guides for a budget of bytes.
func newGuideCache(bytes uint64) *otter.Cache[string, *guide] {
	return otter.Must(&otter.Options[string, *guide]{
		MaximumWeight: bytes,
		Weigher:       func(id string, g *guide) uint32 { return g.weight(id) },
	})
}

// guide is a published guide as read from the private tree, kept until its
// files change.
type guide struct {
	// checked is when (Events.now, UnixNano) the stamps were last found
	// current; within Recheck of it the files are not looked at again.
	checked           atomic.Int64
	recStamp, evStamp stamp
	record            site.GuideRecord
	event             *site.ReadyEvent // nil when not ready
	// head and tail are the event's JSON encoding split where the
	// authtoken value goes, so serving an event costs no JSON encoding.
	head, tail []byte
}

// weight estimates the memory g takes: its encoded event, the event's
// file one and a half times over (decoded, its many small strings cost
// more than their bytes: 22.6 KB measured for a sample's guide, estimated
// 24), the record's file, and some overhead.
func (g *guide) weight(id string) uint32 {
	w := 512 + int64(len(id)) + g.recStamp.size + int64(len(g.head)+len(g.tail))
	if g.event != nil {
		w += g.evStamp.size * 3 / 2
	}
	return uint32(min(w, 1<<32-1))
}

// stamp identifies one version of a file (privatetree.Info.Version).
type stamp struct {
	size    int64
	version string
	exists  bool
}

// Recheck is how long a guide read from the private tree is served to the
// event object and delivery endpoints without looking at its files again:
// an export shows there at most this late. Enqueue, Dispatch and Object
// always look.
const Recheck = 100 * time.Millisecond

// tokenMark stands for the authtoken while an event is encoded; it needs
// no JSON escaping and cannot occur in an event written by the exporter
// (which never sets authtoken).
const tokenMark = "\x7fauthtoken\x7f"

// NewEvents returns Events reading cfg's private tree and queueing on q. The
// signing key is cfg.SigningKeys or, when empty, the store secret
// SigningKeySecret (32 random bytes, created once). It returns an error when
// the configuration is invalid or the key cannot be read or created.
func NewEvents(cfg Config, st *store.Store, q *delivery.Queue) (*Events, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	keys := cfg.SigningKeys
	if len(keys) == 0 {
		if st == nil {
			return nil, errors.New("sidecar: no signing key configured and no store to keep one")
		}
		key, err := st.Secret(context.Background(), SigningKeySecret, func() ([]byte, error) {
			k := make([]byte, authtoken.MinKeyLen)
			_, err := rand.Read(k)
			return k, err
		})
		if err != nil {
			return nil, fmt.Errorf("sidecar: signing key: %w", err)
		}
		keys = [][]byte{key}
	}
	signer, err := authtoken.New(keys, cfg.Clock)
	if err != nil {
		return nil, fmt.Errorf("sidecar: %w", err)
	}
	return &Events{
		root:   cfg.root(),
		queue:  q,
		signer: signer,
		logger: cfg.Logger,
		now:    cfg.Clock.Now,
		cache:  newGuideCache(eventCacheBytes),
	}, nil
}

// Object returns the ready event of guideID with a fresh authtoken. It
// returns ErrGuideNotFound, ErrNotReady, or an error reading the private
// tree.
func (ev *Events) Object(ctx context.Context, guideID string) (*site.ReadyEvent, error) {
	g, err := ev.guide(ctx, guideID, true)
	if err != nil {
		return nil, err
	}
	if g.event == nil {
		return nil, ErrNotReady
	}
	e := *g.event
	e.AuthToken, _ = ev.signer.Issue(guideID)
	return &e, nil
}

// Enqueue queues the ready event of guideID for each of its webhooks, at
// most once per revision and webhook URL: cmd calls it after an export
// changed the guide. It returns the deliveries queued and how many
// webhooks got none because this revision was queued for them before (a
// bundle deleted and uploaded again unchanged), or ErrGuideNotFound,
// ErrNotReady, or a queue error.
func (ev *Events) Enqueue(ctx context.Context, guideID string) (queued []delivery.Delivery, sentBefore int, err error) {
	g, err := ev.guide(ctx, guideID, true)
	if err != nil {
		return nil, 0, err
	}
	ds, err := ev.enqueue(ctx, g, true)
	if err != nil {
		return nil, 0, err
	}
	return ds, len(g.record.Webhooks) - len(ds), nil
}

// Dispatch queues the ready event of guideID for each of its webhooks
// again, whether or not it was sent before: the dispatch endpoint. Errors
// as for Enqueue.
func (ev *Events) Dispatch(ctx context.Context, guideID string) ([]delivery.Delivery, error) {
	g, err := ev.guide(ctx, guideID, true)
	if err != nil {
		return nil, err
	}
	return ev.enqueue(ctx, g, false)
}

// VerifyToken checks an access token presented for a private document of
// guideID. It returns nil or an authtoken error.
func (ev *Events) VerifyToken(token, guideID string) error {
	return ev.signer.Verify(token, guideID)
}

func (ev *Events) enqueue(ctx context.Context, g *guide, unique bool) ([]delivery.Delivery, error) {
	if g.event == nil {
		return nil, ErrNotReady
	}
	if len(g.record.Webhooks) == 0 {
		return []delivery.Delivery{}, nil
	}
	body := ev.render(g)
	msgs := make([]delivery.Message, 0, len(g.record.Webhooks))
	for _, wh := range g.record.Webhooks {
		msgs = append(msgs, delivery.Message{
			GuideID:  g.record.GuideID,
			Revision: g.record.Revision,
			Webhook:  wh,
			Body:     body,
			Unique:   unique,
		})
	}
	ds, err := ev.queue.Enqueue(ctx, msgs)
	if err != nil {
		return nil, fmt.Errorf("queue ready event of %s: %w", g.record.GuideID, err)
	}
	if ds == nil {
		ds = []delivery.Delivery{}
	}
	return ds, nil
}

// render returns the JSON of g's ready event with a fresh authtoken.
func (ev *Events) render(g *guide) []byte {
	tok, _ := ev.signer.Issue(g.record.GuideID)
	b := make([]byte, 0, len(g.head)+len(tok)+len(g.tail))
	b = append(b, g.head...)
	b = append(b, tok...)
	return append(b, g.tail...)
}

// guide returns the published guide guideID, from the cache while its
// record and event files are unchanged; unless fresh, a guide checked less
// than Recheck ago is returned without looking at its files. It returns
// ErrGuideNotFound or an error reading or decoding the private tree.
func (ev *Events) guide(ctx context.Context, guideID string, fresh bool) (*guide, error) {
	if !site.ValidID.MatchString(guideID) {
		return nil, ErrGuideNotFound
	}
	now := ev.now().UnixNano()
	g, _ := ev.cache.GetIfPresent(guideID)
	if g != nil && !fresh {
		if age := now - g.checked.Load(); age >= 0 && age < int64(Recheck) {
			return g, nil
		}
	}
	recStamp, err := ev.stamp(ctx, site.RecordPath(guideID))
	if err != nil {
		return nil, err
	}
	if !recStamp.exists {
		if g != nil {
			ev.cache.Invalidate(guideID)
		}
		return nil, ErrGuideNotFound
	}
	evStamp, err := ev.stamp(ctx, site.EventPath(guideID))
	if err != nil {
		return nil, err
	}
	if g != nil && g.recStamp == recStamp && g.evStamp == evStamp {
		g.checked.Store(now)
		return g, nil
	}
	g, err = ev.load(ctx, guideID, recStamp, evStamp)
	if err != nil {
		return nil, err
	}
	g.checked.Store(now)
	ev.cache.Set(guideID, g)
	return g, nil
}

func (ev *Events) load(ctx context.Context, guideID string, recStamp, evStamp stamp) (*guide, error) {
	g := &guide{recStamp: recStamp, evStamp: evStamp}
	// The stamps kept are those of the versions read, which may be newer
	// than the ones looked at before.
	var err error
	if g.recStamp, err = ev.readJSON(ctx, site.RecordPath(guideID), &g.record); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, ErrGuideNotFound
		}
		return nil, err
	}
	if g.record.GuideID != guideID {
		return nil, fmt.Errorf("%s: guideId is %q", site.RecordPath(guideID), g.record.GuideID)
	}
	if !evStamp.exists {
		return g, nil
	}
	var e site.ReadyEvent
	if g.evStamp, err = ev.readJSON(ctx, site.EventPath(guideID), &e); err != nil {
		if errors.Is(err, fs.ErrNotExist) { // removed since the stat: not ready now
			return g, nil
		}
		return nil, err
	}
	e.AuthToken = tokenMark
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&e); err != nil {
		return nil, fmt.Errorf("encode ready event of %s: %w", guideID, err)
	}
	// A copy of its own size: the buffer has grown to up to twice that.
	head, tail, ok := bytes.Cut(bytes.Clone(buf.Bytes()), []byte(tokenMark))
	if !ok {
		return nil, fmt.Errorf("encode ready event of %s: no authtoken position", guideID)
	}
	e.AuthToken = ""
	g.event, g.head, g.tail = &e, head, tail
	return g, nil
}

func (ev *Events) stamp(ctx context.Context, name string) (stamp, error) {
	info, err := ev.root.Stat(ctx, name)
	if errors.Is(err, fs.ErrNotExist) {
		return stamp{}, nil
	}
	if err != nil {
		return stamp{}, err
	}
	return stamp{size: info.Size, version: info.Version, exists: true}, nil
}

// readJSON decodes name into v and returns the stamp of the version it
// read.
func (ev *Events) readJSON(ctx context.Context, name string, v any) (stamp, error) {
	b, info, err := privatetree.ReadAll(ctx, ev.root, name)
	if err != nil {
		return stamp{}, fmt.Errorf("read %s: %w", name, err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return stamp{}, fmt.Errorf("decode %s: %w", name, err)
	}
	return stamp{size: info.Size, version: info.Version, exists: true}, nil
}
