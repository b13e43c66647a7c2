package viewpage

// Rendition is one resized copy of a published image, for srcset.
type Rendition struct {
	URL           string
	Width, Height int
}
