package watch

// WatchedAll returns a channel closed once w watches every bundle folder
// that was there when it started (the background set-up of Run), for the
// benchmarks of package watch_test.
func WatchedAll(w *Watcher) <-chan struct{} { return w.watched }
