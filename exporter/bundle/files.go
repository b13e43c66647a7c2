package bundle

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/exporter/media"
	"github.com/guidepub/guidepub/site"
)

// fileRef is one file named by guide.json: the JSON path of the reference,
// the slash-separated path relative to the bundle folder, the formats the
// reference accepts and, for an image, the pixel size guide.json gives (0
// when absent), which checkFiles fills from the file.
type fileRef struct {
	jsonPath string
	rel      string
	accept   []media.Format
	w, h     *int
}

// Formats a reference accepts.
var (
	imageFormats = []media.Format{media.JPEG, media.PNG, media.GIF}
	jpegFormat   = []media.Format{media.JPEG}
	pdfFormat    = []media.Format{media.PDF}
	zipFormat    = []media.Format{media.ZIP}
)

// kindFormats returns the formats a document kind's files must have: JPEG
// floor pages, PDF floor plans, ZIP archives, and images otherwise.
func kindFormats(k site.DocumentKind) []media.Format {
	switch {
	case k.FloorPages:
		return jpegFormat
	case strings.HasPrefix(k.Key, "pdf"):
		return pdfFormat
	case strings.HasSuffix(k.Key, "Zip"):
		return zipFormat
	}
	return imageFormats
}

// fileRefs lists every file g names: photos in order, the banner image,
// then documents by language (sorted), each in the order of
// site.DocumentKinds, then the views' own plans in the same order.
func fileRefs(g *Guide) []fileRef {
	var refs []fileRef
	add := func(p, rel string, accept []media.Format, w, h *int) {
		if rel != "" {
			refs = append(refs, fileRef{jsonPath: p, rel: rel, accept: accept, w: w, h: h})
		}
	}
	for i := range g.Media.Photos {
		ph := &g.Media.Photos[i]
		p := fmt.Sprintf("$.media.photos[%d]", i)
		add(p+".file", ph.File, imageFormats, &ph.Width, &ph.Height)
		if ph.Small != nil {
			add(p+".small.file", ph.Small.File, imageFormats, &ph.Small.Width, &ph.Small.Height)
		}
	}
	if bi := g.Media.BannerImage; bi != nil {
		add("$.media.bannerImage.file", bi.File, imageFormats, &bi.Width, &bi.Height)
	}
	documents := func(path string, docs map[string]Documents) {
		for _, lang := range sortedKeys(docs) {
			d := docs[lang]
			p := path + keyPath(lang)
			for _, k := range site.DocumentKinds {
				if !k.FloorPages {
					add(p+"."+k.Key, d.File(k.Key), kindFormats(k), nil, nil)
					continue
				}
				// The slice shares its array with the guide's.
				imgs := d.FloorImages(k.Key)
				for i := range imgs {
					add(fmt.Sprintf("%s.%s[%d].file", p, k.Key, i), imgs[i].File, kindFormats(k), &imgs[i].Width, &imgs[i].Height)
				}
			}
		}
	}
	documents("$.media.documents", g.Media.Documents)
	for i := range g.Views {
		documents(fmt.Sprintf("$.views[%d].plans", i), g.Views[i].Plans)
	}
	return refs
}

// checkRel returns why rel cannot name a file of a bundle, or "" when it
// can: it must be a clean, relative, slash-separated path that stays in
// the bundle folder, names no hidden element and is not guide.json itself
// (which holds webhook secrets and must never be published).
func checkRel(rel string) string {
	switch {
	case rel == "":
		return "file path is empty"
	case strings.ContainsRune(rel, 0):
		return "file path contains a NUL byte"
	case strings.Contains(rel, `\`):
		return "file path contains a backslash; use forward slashes"
	case strings.HasPrefix(rel, "/"):
		return "file path is absolute; it must be relative to the bundle folder"
	}
	for _, el := range strings.Split(rel, "/") {
		switch {
		case el == "..":
			return "file path escapes the bundle folder (\"..\")"
		case el == "" || el == ".":
			return "file path is not clean (empty or \".\" element)"
		case strings.HasPrefix(el, "."):
			return fmt.Sprintf("file path has a hidden element %q", el)
		}
	}
	if rel == FileName {
		return "guide.json cannot be published as a media file"
	}
	if path.Clean(rel) != rel {
		return "file path is not clean"
	}
	return ""
}

// checkFiles checks that every file g names exists in the bundle folder dir
// of fsys as a regular file reached through no symbolic link, with no
// other hard link (checkMedia), and is what
// its name and its reference say (media.Check): the format its extension
// names, one the reference accepts, within lim (pixels, decoding work and
// memory), with the width and height guide.json gives, if any. It fills absent image sizes from the files and returns what it
// found of each file by path. Each reference gets its own problems; path
// syntax problems are Parse's.
func checkFiles(fsys afero.Fs, dir, folder string, g *Guide, lim media.Limits) (map[string]media.Info, []Problem) {
	var problems []Problem
	type checked struct {
		info media.Info
		msg  string
	}
	seen := map[string]checked{}
	infos := map[string]media.Info{}
	for _, ref := range fileRefs(g) {
		if checkRel(ref.rel) != "" {
			continue // reported by Parse
		}
		c, ok := seen[ref.rel]
		if !ok {
			c.msg = checkMedia(fsys, dir, ref.rel)
			if c.msg == "" {
				c.info, c.msg = checkContent(fsys, filepath.Join(dir, filepath.FromSlash(ref.rel)), ref.rel, lim)
			}
			seen[ref.rel] = c
		}
		add := func(p, msg string) {
			problems = append(problems, Problem{File: folder + "/" + ref.rel, Path: p, Message: msg})
		}
		if c.msg != "" {
			add(ref.jsonPath, c.msg)
			continue
		}
		infos[ref.rel] = c.info
		if !slices.Contains(ref.accept, c.info.Format) {
			var names []string
			for _, f := range ref.accept {
				names = append(names, f.Name())
			}
			add(ref.jsonPath, fmt.Sprintf("the file is %s; this field takes %s", c.info.Format.Name(), strings.Join(names, " or ")))
			continue
		}
		if ref.w == nil {
			continue
		}
		base := strings.TrimSuffix(ref.jsonPath, ".file")
		for _, d := range []struct {
			name   string
			given  *int
			inFile int
		}{{"width", ref.w, c.info.Width}, {"height", ref.h, c.info.Height}} {
			switch {
			case *d.given == 0:
				*d.given = d.inFile
			case *d.given != d.inFile:
				add(base+"."+d.name, fmt.Sprintf("%s %d differs from the file's %d pixels (leave it out to take the file's)", d.name, *d.given, d.inFile))
			}
		}
	}
	return infos, problems
}

// checkContent returns what the bundle file at name (rel in the bundle)
// holds, or why it cannot be published: another hard link to the file
// opened, media.Check's problem, or a name whose extension says another
// format.
func checkContent(fsys afero.Fs, name, rel string, lim media.Limits) (media.Info, string) {
	f, err := fsys.Open(name)
	if err != nil {
		return media.Info{}, readError(err)
	}
	defer f.Close()
	// The opened file's own Stat, not checkMedia's information on the
	// name: the name may have been swapped or linked between the check and
	// the open, so the size read and the hard links counted are those of
	// the file actually opened.
	fi, err := f.Stat()
	if err != nil {
		return media.Info{}, readError(err)
	}
	if msg := checkLinks(fi); msg != "" {
		return media.Info{}, msg
	}
	info, err := media.Check(f, fi.Size(), lim)
	if err != nil {
		return info, "the file is " + err.Error()
	}
	ext := path.Ext(rel)
	if named, ok := media.ByExtension(ext); !ok || named != info.Format {
		return info, fmt.Sprintf("the file is %s, but its name ends in %q", info.Format.Name(), ext)
	}
	return info, ""
}

// checkFile returns why the bundle file rel (already syntactically safe)
// cannot be published, or "" when it is a regular file reached without a
// symbolic link; then it also returns the file's information, from the
// Lstat (or Stat, when fsys cannot Lstat) of its last path element.
func checkFile(fsys afero.Fs, dir, rel string) (os.FileInfo, string) {
	lst, canLstat := fsys.(afero.Lstater)
	els := strings.Split(rel, "/")
	cur := dir
	var fi os.FileInfo
	for i, el := range els {
		cur = filepath.Join(cur, el)
		var err error
		if canLstat {
			fi, _, err = lst.LstatIfPossible(cur)
		} else {
			fi, err = fsys.Stat(cur)
		}
		last := i == len(els)-1
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				return nil, msgNotExist
			}
			return nil, readError(err)
		}
		at := strings.Join(els[:i+1], "/")
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			if last {
				return nil, "file is a symbolic link; bundles must hold regular files"
			}
			return nil, fmt.Sprintf("folder %q on the way is a symbolic link; bundles must hold regular files", at)
		case !last && !fi.IsDir():
			return nil, msgNotExist
		case last && !fi.Mode().IsRegular():
			return nil, "not a regular file"
		}
	}
	return fi, ""
}

// checkMedia is checkFile for a file that is published: it must also have
// no other hard link, since the other name may be a private file anywhere
// on the machine (published 0644, it would be anyone's).
func checkMedia(fsys afero.Fs, dir, rel string) string {
	// checkFile's Lstat of a regular file gives its links: no new Stat.
	fi, msg := checkFile(fsys, dir, rel)
	if msg != "" {
		return msg
	}
	return checkLinks(fi)
}

// checkLinks returns why the file of fi cannot be published for its hard
// links, or "".
func checkLinks(fi os.FileInfo) string {
	if n := hardLinks(fi); n > 1 {
		return fmt.Sprintf("file has %d hard links; bundles must hold files of their own (copy it rather than link it)", n)
	}
	return ""
}

// msgNotExist is the problem of a named file that is not there.
const msgNotExist = "file does not exist in the bundle"

// readError turns a file system error into a message without the
// absolute paths of the machine.
func readError(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	if errors.Is(err, fs.ErrNotExist) {
		return "file does not exist"
	}
	return "cannot read: " + err.Error()
}
