package site

import "time"

// GuideRecord is what the sidecar knows of a published guide, written by the
// exporter to RecordPath(GuideID) in the private tree.
type GuideRecord struct {
	GuideID       string   `json:"guideId"`
	OwnerID       string   `json:"ownerId"`
	WorkOrderID   string   `json:"workOrderId"`
	Alias         string   `json:"alias,omitempty"`
	DefaultViewID string   `json:"defaultViewId"`
	ViewIDs       []string `json:"viewIds"`
	// Revision is a hex SHA-256 over everything the export of the guide
	// produced; it changes exactly when a published byte changes.
	Revision string `json:"revision"`
	// Ready is true when the default view is ready and EventPath exists.
	Ready    bool      `json:"ready"`
	Webhooks []Webhook `json:"webhooks"`
}

// Webhook is one target of a guide's ready event. With a Secret, deliveries
// are signed (Standard Webhooks, secret "whsec_" + base64).
type Webhook struct {
	URL    string `json:"url"`
	Secret string `json:"secret,omitempty"`
}

// Manifest is the exporter's record of what it has published, one entry per
// guide (kept as one file per guide in the private tree, see
// records.Records in exporter/records; earlier versions kept it whole at
// ManifestFile, which the exporter converts). It lets an incremental export delete the
// files of views and aliases that went away, and keeps an id with the guide
// that published it first.
type Manifest struct {
	Version int                      `json:"version"`
	Guides  map[string]ManifestGuide `json:"guides"`
}

// ManifestGuide is one published guide in the Manifest.
type ManifestGuide struct {
	Folder   string   `json:"folder"`   // bundle folder name under --src
	Revision string   `json:"revision"` // GuideRecord.Revision
	Ids      []string `json:"ids"`      // view ids and alias claimed (public top-level folders)
	Files    []string `json:"files"`    // every public file written, sorted
	Private  []string `json:"private"`  // every private file written, sorted
	// Source fingerprints what the guide was last exported from (guide.json,
	// size and time of every file in Inputs, export settings). An export
	// before NextChange with the same fingerprint, whose files all still
	// exist, rewrites nothing and skips parsing and rendering.
	Source string `json:"source,omitempty"`
	// Inputs are the bundle files guide.json names, sorted.
	Inputs []string `json:"inputs,omitempty"`
	// NextChange is the earliest expiry of a view still to come when the
	// guide was exported (its output changes then), or nil.
	NextChange *time.Time `json:"nextChange,omitempty"`
	Views      int        `json:"views,omitempty"` // views published
	Ready      bool       `json:"ready,omitempty"` // the default view was ready
	// Quick are the public compressed siblings last written with quick
	// settings (Encoding.EncodeQuick), sorted: such a guide is never up
	// to date, and its next export replaces them with their final bytes.
	Quick []string `json:"quick,omitempty"`
	// Visibility is the digest of what decided which kinds of files and
	// fields each view showed when the guide was exported (its views,
	// their statuses and hides). An export that changes it and stops
	// half-way withdraws the public files it did not reach.
	Visibility string `json:"visibility,omitempty"`
	// Seal is a digest of the stamps the guide's ledger recorded of
	// every file of Files and Private (see package exporter/ledger): the
	// files are as recorded when their stamps now give the same, which
	// is checked without reading the ledger. Empty when some file's
	// digest was not known.
	Seal string `json:"seal,omitempty"`
}
