package delivery

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivershared/baseservice"
	"github.com/riverqueue/river/rivershared/riverpilot"
	"github.com/riverqueue/river/rivertype"
)

// A delivery is sent as soon as it is queued, not at the next look for due
// attempts. On PostgreSQL, River's LISTEN/NOTIFY does it: the insert
// notifies every sidecar's listener when its transaction commits (sent by
// guidepub for every insert, since River sends at most one per fetch
// cooldown: see announceInsert in river.go). SQLite
// has no notifications, so River only polls there; guidepub wakes the
// queue itself, in two ways:
//
//   - in the process that queued: once the transaction has committed,
//     River's producer is told to fetch now, through the hook River gives
//     its pilots for exactly this ("NotifyNonTxJobInsert": a job became
//     available after its transaction finished, in a poll-only client);
//   - in every other process on the same file: the queueing process then
//     changes the time stamps of the wake file beside the database
//     (<file>.wake, empty), which each started queue watches with inotify
//     (through fsnotify) and answers by fetching.
//
// Both come after the commit, so a fetch they cause finds the job. The
// poll stays as the fallback: a missed wake-up (a folder that cannot be
// watched, an older process queueing) delays a delivery until the next
// look, never loses it.

// wakeSuffix names the wake file: the SQLite file's path plus this.
const wakeSuffix = ".wake"

// wakeDriver is River's SQLite driver with wakePilot as its pilot. River
// takes a driver's pilot through its driver plugin interface (a
// PluginInit and a PluginPilot method); everything else is the driver's.
type wakeDriver struct {
	riverdriver.Driver[*sql.Tx]
	pilot *wakePilot
}

// PluginInit is part of River's driver plugin interface; nothing to do.
func (d *wakeDriver) PluginInit(*baseservice.Archetype) {}

// PluginPilot returns the pilot that keeps River's wake-up hook.
func (d *wakeDriver) PluginPilot() riverpilot.Pilot { return d.pilot }

// wakePilot is River's standard pilot that keeps, from PilotInit, the
// function that makes the client's producers fetch at once.
type wakePilot struct {
	riverpilot.StandardPilot
	notify func(ctx context.Context, res []*rivertype.JobInsertResult)
}

// PilotInit keeps params.NotifyNonTxJobInsert. River calls it once, in
// river.NewClient, before anything else can call wake.
func (p *wakePilot) PilotInit(archetype *baseservice.Archetype, params *riverpilot.PilotInitParams) {
	p.StandardPilot.PilotInit(archetype, params)
	p.notify = params.NotifyNonTxJobInsert
}

// wake makes the producer of guidepub's queue fetch due jobs now (or, when
// it fetched less than River's fetch cooldown ago, at the end of it).
func (p *wakePilot) wake() {
	if p.notify == nil {
		return
	}
	p.notify(context.Background(), []*rivertype.JobInsertResult{{Job: &rivertype.JobRow{Queue: queueName}}})
}

// wakeFile is the wake file of the SQLite database at dbPath: touched by
// every process that queues, watched by every started queue.
type wakeFile struct {
	path string
}

// signal tells the other processes on the database that jobs were
// committed: it sets the wake file's time stamps to now, creating the
// file when it is missing. The file is opened without following a
// symbolic link (as the store opens its own files): a link in its place
// is an error, and neither it nor what it points to is touched or made.
// It is a hint: its error is only worth a debug log, since the poll finds
// the jobs anyway.
func (w wakeFile) signal() error {
	f, err := os.OpenFile(w.path, os.O_WRONLY|os.O_CREATE|openNoFollow, 0o600)
	if err != nil {
		return err
	}
	now := time.Now()
	err = touch(f, now)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// watch calls wake each time the wake file is created, written or
// touched, until stop is called. It watches the file's folder (a watch on
// the file alone would end with its first removal). It returns an error,
// having started nothing, when the folder cannot be watched.
func (w wakeFile) watch(wake func()) (stop func(), err error) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	if err := fw.Add(filepath.Dir(w.path)); err != nil {
		fw.Close()
		return nil, err
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case ev, ok := <-fw.Events:
				if !ok {
					return
				}
				if ev.Name == w.path && !ev.Has(fsnotify.Remove) && !ev.Has(fsnotify.Rename) {
					wake()
				}
			case _, ok := <-fw.Errors:
				if !ok {
					return
				}
				// A lost event (queue overflow) may have been a wake-up.
				wake()
			}
		}
	})
	return func() {
		fw.Close()
		wg.Wait()
	}, nil
}
