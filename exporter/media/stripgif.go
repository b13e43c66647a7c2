package media

import (
	"bufio"
	"errors"
	"fmt"
	"io"
)

// GIF block introducers and extension labels.
const (
	gifImage     = 0x2C
	gifExtension = 0x21
	gifTrailer   = 0x3B
	gifControl   = 0xF9 // graphic control: delay, disposal, transparency
	gifApp       = 0xFF // application: looping (NETSCAPE2.0), XMP...
)

// gifStripper copies a GIF's header, colour tables and frames, rebuilds
// the graphic control and looping extensions from their fields, and
// drops every other extension (comments, plain text, XMP...).
type gifStripper struct {
	dst           io.Writer
	r             *bufio.Reader
	images        int
	width, height int // the logical screen's
}

func stripGIF(dst io.Writer, r *bufio.Reader) (DecodeCost, error) {
	s := &gifStripper{dst: dst, r: r}
	err := s.run()
	return gifCost(s.width, s.height, s.images), err
}

func (s *gifStripper) run() error {
	r, dst := s.r, s.dst
	if err := s.header(); err != nil {
		return err
	}
	for {
		b, err := r.ReadByte()
		if err != nil {
			return truncated(GIF, err)
		}
		switch b {
		case gifTrailer:
			if s.images == 0 {
				return errors.New("a GIF image with no image data")
			}
			_, err := dst.Write([]byte{b})
			return err
		case gifImage:
			err = s.image()
		case gifExtension:
			err = s.extension()
		default:
			return fmt.Errorf("a GIF image with an unknown block 0x%02x", b)
		}
		if err != nil {
			return err
		}
	}
}

// header copies the header, the logical screen descriptor and the global
// colour table.
func (s *gifStripper) header() error {
	var hdr [13]byte
	if _, err := io.ReadFull(s.r, hdr[:]); err != nil {
		return truncated(GIF, err)
	}
	if _, err := s.dst.Write(hdr[:]); err != nil {
		return err
	}
	s.width, s.height = int(hdr[6])|int(hdr[7])<<8, int(hdr[8])|int(hdr[9])<<8
	return s.colourTable(hdr[10])
}

// colourTable copies the colour table that the packed fields flags
// announce, if any.
func (s *gifStripper) colourTable(flags byte) error {
	if flags&0x80 == 0 {
		return nil
	}
	if _, err := io.CopyN(s.dst, s.r, 3<<(flags&7+1)); err != nil {
		return truncated(GIF, err)
	}
	return nil
}

// image copies a frame: its descriptor, colour table and LZW data.
func (s *gifStripper) image() error {
	var d [10]byte
	d[0] = gifImage
	if _, err := io.ReadFull(s.r, d[1:]); err != nil {
		return truncated(GIF, err)
	}
	if _, err := s.dst.Write(d[:]); err != nil {
		return err
	}
	if err := s.colourTable(d[9]); err != nil {
		return err
	}
	lzw, err := s.r.ReadByte()
	if err != nil {
		return truncated(GIF, err)
	}
	if _, err := s.dst.Write([]byte{lzw}); err != nil {
		return err
	}
	s.images++
	return gifBlocks(s.dst, s.r)
}

// extension reads an extension and writes what display needs of it. The
// graphic control and looping extensions are read (they are small); the
// others are skipped as they are read.
func (s *gifStripper) extension() error {
	label, err := s.r.ReadByte()
	if err != nil {
		return truncated(GIF, err)
	}
	if label != gifControl && label != gifApp {
		return gifBlocks(io.Discard, s.r)
	}
	blocks, err := s.blocks(label == gifApp)
	if err != nil {
		return err
	}
	var out []byte
	switch {
	case label == gifControl && len(blocks) > 0 && len(blocks[0]) == 4:
		out = append([]byte{gifExtension, gifControl, 4}, blocks[0]...)
		out = append(out, 0)
	case label == gifApp && len(blocks) > 1 && isLooping(blocks[0]) && len(blocks[1]) == 3 && blocks[1][0] == 1:
		out = append([]byte{gifExtension, gifApp, 11}, "NETSCAPE2.0"...)
		out = append(out, 3, 1, blocks[1][1], blocks[1][2], 0)
	}
	_, err = s.dst.Write(out)
	return err
}

// isLooping reports whether an application extension's identifier names
// the looping extension (Netscape's, or its ANIMEXTS twin).
func isLooping(id []byte) bool {
	return string(id) == "NETSCAPE2.0" || string(id) == "ANIMEXTS1.0"
}

// maxGIFExtension bounds the data of one extension read into memory; a
// longer one is refused.
const maxGIFExtension = 1 << 20

// blocks reads an extension's data sub-blocks up to their terminator; for
// an application extension (app) other than looping (XMP...), the blocks
// after its identifier are skipped, whatever their size.
func (s *gifStripper) blocks(app bool) ([][]byte, error) {
	var out [][]byte
	total := 0
	for {
		n, err := s.r.ReadByte()
		if err != nil {
			return nil, truncated(GIF, err)
		}
		if n == 0 {
			return out, nil
		}
		if total += int(n); total > maxGIFExtension {
			return nil, fmt.Errorf("a GIF image with an extension of more than %d KiB", maxGIFExtension>>10)
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(s.r, b); err != nil {
			return nil, truncated(GIF, err)
		}
		if out = append(out, b); app && len(out) == 1 && !isLooping(b) {
			return out, gifBlocks(io.Discard, s.r)
		}
	}
}

// gifBlocks copies data sub-blocks up to and including their terminator.
func gifBlocks(dst io.Writer, r *bufio.Reader) error {
	for {
		n, err := r.ReadByte()
		if err != nil {
			return truncated(GIF, err)
		}
		if _, err := dst.Write([]byte{n}); err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		if _, err := io.CopyN(dst, r, int64(n)); err != nil {
			return truncated(GIF, err)
		}
	}
}
