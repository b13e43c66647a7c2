package exporter

import (
	"context"
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
		e.uploads.mu.Lock()
		n := e.uploads.uploads
		e.uploads.mu.Unlock()
		if n == 1 {
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

// TestGiveWay checks the gate itself: wait returns at once with no upload,
// and once the last of several uploads is done.
func TestGiveWay(t *testing.T) {
	var g giveWay
	g.wait()
	done1, done2 := g.upload(), g.upload()
	waited := make(chan struct{})
	go func() { g.wait(); close(waited) }()
	done1()
	select {
	case <-waited:
		t.Fatal("wait returned with an upload in progress")
	case <-time.After(50 * time.Millisecond):
	}
	done2()
	select {
	case <-waited:
	case <-time.After(10 * time.Second):
		t.Fatal("wait did not return once the uploads were done")
	}
}
