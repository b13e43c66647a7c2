package publish

// Settled reports whether every change Record was given for the guide
// guideID (or, without one, the folder) is in the bucket: none of it is
// pending, and no reconcile after a crash is owed. Both empty ask whether
// everything is. A CDN in front of the bucket is purged only then (package
// edge): a purge before the upload would let it cache the old object
// again.
func (l *Live) Settled(guideID, folder string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.started || l.recover {
		return false
	}
	if guideID == "" && folder == "" {
		return len(l.pending) == 0
	}
	name := guideID
	if name == "" {
		name = "folder:" + folder
	}
	_, pending := l.pending[name]
	return !pending
}
