package exporter

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/guidepub/guidepub/site"
)

// manifestVersion is the version of the manifest format this package writes.
const manifestVersion = 1

// manifest is the record of what an exporter published: one entry per
// guide id. It caches the JSON of each entry, so that saving the manifest
// after one guide's export encodes that guide only, and remembers the hash
// of the bytes last read or written, so that an unchanged manifest is not
// written again. It is not safe for concurrent use.
type manifest struct {
	guides map[string]site.ManifestGuide
	// owners indexes guides by public id (view id or alias): the guide id
	// that publishes it.
	owners map[string]string
	// entryJSON caches the JSON member `"id":{entry}` of each entry.
	entryJSON map[string][]byte
	savedSum  [sha256.Size]byte
}

// newManifest returns an empty manifest.
func newManifest() *manifest {
	return &manifest{guides: map[string]site.ManifestGuide{}, owners: map[string]string{}, entryJSON: map[string][]byte{}}
}

// decode replaces the entries with those of the manifest file data. It
// returns an error when data is not JSON or has another version.
func (m *manifest) decode(data []byte) error {
	var f site.Manifest
	if err := json.Unmarshal(data, &f); err != nil {
		return err
	}
	if f.Version != manifestVersion {
		return fmt.Errorf("version %d, want %d", f.Version, manifestVersion)
	}
	if f.Guides == nil {
		f.Guides = map[string]site.ManifestGuide{}
	}
	m.guides = f.Guides
	clear(m.owners)
	for id, mg := range m.guides {
		m.index(id, mg)
	}
	clear(m.entryJSON)
	m.savedSum = sha256.Sum256(data)
	return nil
}

// get returns the entry of guide id.
func (m *manifest) get(id string) (site.ManifestGuide, bool) {
	mg, ok := m.guides[id]
	return mg, ok
}

// owner returns the guide id and entry of the guide publishing the public
// id (a view id or an alias).
func (m *manifest) owner(publicID string) (string, site.ManifestGuide, bool) {
	gid, ok := m.owners[publicID]
	if !ok {
		return "", site.ManifestGuide{}, false
	}
	mg, ok := m.guides[gid]
	return gid, mg, ok
}

// set records the entry of guide id.
func (m *manifest) set(id string, entry site.ManifestGuide) {
	m.unindex(id)
	m.guides[id] = entry
	m.index(id, entry)
	delete(m.entryJSON, id)
}

// remove drops guide id.
func (m *manifest) remove(id string) {
	m.unindex(id)
	delete(m.guides, id)
	delete(m.entryJSON, id)
}

// index adds the public ids of entry, published by guide id, to owners.
func (m *manifest) index(id string, entry site.ManifestGuide) {
	for _, pid := range entry.Ids {
		m.owners[pid] = id
	}
}

// unindex drops the public ids guide id's entry holds from owners.
func (m *manifest) unindex(id string) {
	for _, pid := range m.guides[id].Ids {
		if m.owners[pid] == id {
			delete(m.owners, pid)
		}
	}
}

// inFolder returns the ids of the guides published from folder, except
// the guide id except, sorted.
func (m *manifest) inFolder(folder, except string) []string {
	var ids []string
	for id, mg := range m.guides {
		if mg.Folder == folder && id != except {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// snapshot returns a copy of the manifest as a site.Manifest.
func (m *manifest) snapshot() site.Manifest {
	return site.Manifest{Version: manifestVersion, Guides: maps.Clone(m.guides)}
}

// encode returns the bytes json.Marshal of the snapshot would return (with
// a final newline), assembled from the cached JSON of each entry:
// encoding/json writes a map's entries sorted by key, and so does this. It
// returns an error when an entry cannot be encoded.
func (m *manifest) encode() ([]byte, error) {
	ids := slices.Sorted(maps.Keys(m.guides))
	size := 64
	for _, id := range ids {
		if _, ok := m.entryJSON[id]; !ok {
			member, err := entryMember(id, m.guides[id])
			if err != nil {
				return nil, err
			}
			m.entryJSON[id] = member
		}
		size += len(m.entryJSON[id]) + 1
	}
	buf := make([]byte, 0, size)
	buf = fmt.Appendf(buf, `{"version":%d,"guides":{`, manifestVersion)
	for i, id := range ids {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, m.entryJSON[id]...)
	}
	return append(buf, "}}\n"...), nil
}

// entryMember returns the JSON object member `"id":{entry}`.
func entryMember(id string, entry site.ManifestGuide) ([]byte, error) {
	key, err := marshalJSON(id)
	if err != nil {
		return nil, err
	}
	value, err := marshalJSON(entry)
	if err != nil {
		return nil, err
	}
	member := append(bytes.TrimSuffix(key, []byte("\n")), ':')
	return append(member, bytes.TrimSuffix(value, []byte("\n"))...), nil
}

// needsSave returns the encoded manifest and whether it differs from the
// bytes last read or written (saved records them once written). It
// returns an error when an entry cannot be encoded.
func (m *manifest) needsSave() ([]byte, bool, error) {
	data, err := m.encode()
	if err != nil {
		return nil, false, err
	}
	return data, sha256.Sum256(data) != m.savedSum, nil
}

// saved records that data, returned by needsSave, is now the file's content.
func (m *manifest) saved(data []byte) { m.savedSum = sha256.Sum256(data) }
