// Package bundle reads and validates guide bundles: a folder holding
// guide.json and the media files it names. A bad bundle is reported with
// every problem found, each naming the file and the JSON path at fault.
//
// Load checks a bundle in three steps, collecting problems as it goes:
// the text of guide.json (UTF-8, JSON syntax with line and column,
// duplicate keys), its shape against the Guide type (unknown fields, wrong
// types, integers, fields tagged `bundle:"required"`), then its meaning
// (ids, views, units, hidden features, measures, URLs, secrets, file path
// syntax), and finally the files it names (present, regular, inside the
// bundle, reached through no symbolic link). A problem that only follows
// from an earlier one (a missing id is also an invalid id) is not
// repeated. Parse does the first three steps on guide.json alone.
package bundle
