package site

import "maps"

// MediaTypes returns the Content-Type of every media file extension
// ContentType knows (".pdf" → "application/pdf", …), as a new map the caller
// may keep. Server configuration printers list them.
func MediaTypes() map[string]string { return maps.Clone(mediaTypes) }
