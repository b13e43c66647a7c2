// Package leaksweep holds the leak sweep, a test of the first rule of the
// product: what a view hides is in no public byte, and no media metadata
// (GPS position, owner, capture time, XMP, IPTC, ICC profile names, text
// chunks, comments, PDF document information, thumbnails) is either,
// whatever the view hides (docs/output.md#the-hide-table).
//
// The sweep builds a corpus whose every free-text field of guide.json,
// every file name and every metadata slot of its media carries a canary
// the test generates, exports it with each hidden feature on its own, and
// searches every public byte (compressed siblings decompressed, file
// names and object keys included) in each channel: the exported tree and
// the bucket after live publishing. It is all in the package's tests.
//
// Adding a metadata slot is adding one generator to slots (slots_test.go);
// adding a guide.json field is adding one row to fields
// (corpus_test.go); adding a channel is adding one scenario to scenarios
// (sweep_test.go).
package leaksweep
