// Package render is the export's third stage: it decides what a guide
// publishes. It takes a loaded bundle (package bundle), the settings
// (Settings: the URLs documents link to, the autofill source name, the
// size limit of one file) and the time, and gives a Plan: every public and
// private file of the guide, each with its bytes (documents, view pages,
// the ready event) or the bundle file it is made from and how (a copy, a
// copy stripped of private metadata, a rendition of a given width).
//
// Guide is a pure function: it reads nothing but its arguments (media
// are named, never opened), writes nothing and reads no clock, so the
// same bundle, settings and time give the same plan, byte for byte. The
// golden outputs (fixtures/golden) are its outputs. Writing a plan is
// package write's; what is decided here is checked against the hide table
// (CheckPublic) before it leaves.
package render
