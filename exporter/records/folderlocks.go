package records

import "sync"

// FolderLocks hands out one mutex per bundle folder, so that exports of
// the same folder run one at a time while other folders proceed. It is
// safe for concurrent use.
type FolderLocks struct {
	mu sync.Mutex
	m  map[string]*sync.Mutex
}

// Get returns the mutex of folder.
func (l *FolderLocks) Get(folder string) *sync.Mutex {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil {
		l.m = map[string]*sync.Mutex{}
	}
	m, ok := l.m[folder]
	if !ok {
		m = &sync.Mutex{}
		l.m[folder] = m
	}
	return m
}
