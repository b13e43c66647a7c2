package exporter

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestCatchUpGivesWayToUploads checks that ExportAll takes no folder while
// an ExportBundle call is in progress: the upload's folder is held locked
// so that its export stays in progress, and ExportAll, started meanwhile,
// must publish nothing until that export is done; then everything.
func TestCatchUpGivesWayToUploads(t *testing.T) {
	ev := newEnv(t, fsKinds[0])
	e := ev.exporter()
	folders, err := e.Folders()
	if err != nil || len(folders) < 2 {
		t.Fatalf("Folders() = %v, %v; want two or more", folders, err)
	}
	unlock := e.lockFolder(folders[0])
	uploaded := make(chan error, 1)
	go func() {
		_, err := e.ExportBundle(context.Background(), folders[0])
		uploaded <- err
	}()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if e.way.uploads.running() == 1 {
			break
		}
		if time.Now().After(deadline) {
			unlock()
			t.Fatal("the upload did not start")
		}
	}

	published := make(chan string, len(folders))
	caughtUp := make(chan error, 1)
	go func() {
		_, err := e.ExportAllEach(context.Background(), func(r GuideResult) { published <- r.Folder })
		caughtUp <- err
	}()
	// Given time to go wrong: the other folders take milliseconds each.
	select {
	case f := <-published:
		t.Errorf("the catch-up published %s while an upload was in progress", f)
	case <-time.After(300 * time.Millisecond):
	}
	unlock()
	if err := <-uploaded; err != nil {
		t.Fatalf("ExportBundle: %v", err)
	}
	if err := <-caughtUp; err != nil {
		t.Fatalf("ExportAll: %v", err)
	}
	close(published)
	n := 0
	for range published {
		n++
	}
	// The upload's folder was published by the upload: the catch-up
	// found it up to date.
	if n != len(folders)-1 {
		t.Errorf("the catch-up published %d folders, want %d", n, len(folders)-1)
	}
}

// TestInProgress checks the gate itself: wait returns at once with nothing
// in progress (before and after any work), once the last of several works
// is done (a done called twice counts once), and with ctx's error when ctx
// ends first.
func TestInProgress(t *testing.T) {
	var p inProgress
	ctx := context.Background()
	if err := p.wait(ctx); err != nil {
		t.Fatal(err)
	}
	done1, done2 := p.start(), p.start()
	waited := make(chan error, 1)
	go func() { waited <- p.wait(ctx) }()
	done1()
	done1()
	select {
	case <-waited:
		t.Fatal("wait returned with work in progress")
	case <-time.After(50 * time.Millisecond):
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := p.wait(cancelled); !errors.Is(err, context.Canceled) {
		t.Errorf("wait with its context ended: %v, want context.Canceled", err)
	}
	done2()
	select {
	case err := <-waited:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("wait did not return once the work was done")
	}
	if err := p.wait(ctx); err != nil || p.running() != 0 {
		t.Errorf("after the work: wait %v, running %d", err, p.running())
	}
	p.start()()
	if err := p.wait(ctx); err != nil {
		t.Fatal(err)
	}
}
