// Package watch notices uploads into a source folder of bundles and tells a
// Handler which bundle to re-export, and when.
//
// Each sub-folder of the source folder is one bundle. A change anywhere in a
// bundle's folder (nested folders included) marks the bundle. An upload that
// ends with a rename (the bundle folder renamed from its staging name, or
// its guide.json renamed into place, as an editor's rename-save does) is
// complete then and is exported at once; other marks are debounced per
// bundle (a quiet period, with a maximum wait so that a steady trickle of
// writes still gives an export), so a multi-file copy gives one call. Editor and uploader temporary files
// and dot-files are ignored, and so are changes of permissions only; a
// folder with a staging name ("x.partial") is not a bundle until renamed.
// A renamed bundle folder is a move: the new name is exported before the
// old one is unpublished, which then finds nothing left to remove, and the
// folder stays watched under its new name (see docs/watching.md).
//
// Changes are seen with inotify-style events (github.com/fsnotify/fsnotify,
// through package site/fswatch, which serve shares).
// Where events cannot be had (the watch limit is reached, or a network file
// system gives none), the Watcher polls instead, comparing every bundle's
// file names, sizes and modification times.
//
// A Handler's Changed may ask to be called again at a given time (a view
// that expires); the Watcher schedules it with its Clock. Package watch knows
// nothing of the exporter: the command wires the two together.
package watch
