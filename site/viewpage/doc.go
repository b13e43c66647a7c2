// Package viewpage renders the three static HTML pages of one view: the
// branded page, the unbranded page and the embedded page. Pages are built
// from the view's public documents (status, summary and the autofill
// object) plus what those documents lack (banner, property, units), use
// html/template so every bundle string is escaped, make no request outside
// their own deployment, and need no script. See docs/pages.md.
package viewpage
