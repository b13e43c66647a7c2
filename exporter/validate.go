package exporter

import (
	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/exporter/claims"
)

// Validate checks every bundle folder under dir of fsys as ExportAll would,
// without writing anything: each bundle must load, and no two bundles may
// claim the same guide id, view id or alias (the first in folder name order
// keeps it). It returns one result per folder, in name order, with a
// *bundle.Error for each rejected bundle; the error is non-nil only when
// dir cannot be listed.
func Validate(fsys afero.Fs, dir string, limits bundle.Limits) ([]GuideResult, error) {
	cfg := DefaultConfig()
	cfg.Src, cfg.SrcDir, cfg.Out, cfg.Private, cfg.Limits = fsys, dir, afero.NewMemMapFs(), afero.NewMemMapFs(), limits
	e, err := New(cfg)
	if err != nil {
		return nil, err
	}
	folders, err := e.Folders()
	if err != nil {
		return nil, err
	}
	loaded := make([]*bundle.Bundle, len(folders))
	results := make([]GuideResult, len(folders))
	e.parallel(len(folders), func(i int) {
		var err error
		loaded[i], err = e.load(folders[i])
		results[i] = GuideResult{Folder: folders[i], Err: err}
	})
	for i, b := range loaded {
		if b == nil {
			continue
		}
		results[i].GuideID = b.Guide.GuideID
		results[i].Views = len(b.Guide.Views)
		if err := e.claim(b.Folder, claims.IDsOf(&b.Guide), func(string, string) bool { return true }); err != nil {
			results[i].Err = err
		}
	}
	return results, nil
}
