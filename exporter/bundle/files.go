package bundle

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/afero"
)

// fileRef is one file named by guide.json: the JSON path of the reference
// and the slash-separated path relative to the bundle folder.
type fileRef struct {
	jsonPath string
	rel      string
}

// fileRefs lists every file g names: photos in order, then documents by
// language (sorted), each in the order of site.DocumentKinds.
func fileRefs(g *Guide) []fileRef {
	var refs []fileRef
	add := func(p, rel string) {
		if rel != "" {
			refs = append(refs, fileRef{jsonPath: p, rel: rel})
		}
	}
	for i, ph := range g.Media.Photos {
		p := fmt.Sprintf("$.media.photos[%d]", i)
		add(p+".file", ph.File)
		if ph.Small != nil {
			add(p+".small.file", ph.Small.File)
		}
	}
	for _, lang := range sortedKeys(g.Media.Documents) {
		d := g.Media.Documents[lang]
		p := "$.media.documents" + keyPath(lang)
		d.eachFile(func(key string, i int, rel string) {
			if i < 0 {
				add(p+"."+key, rel)
			} else {
				add(fmt.Sprintf("%s.%s[%d].file", p, key, i), rel)
			}
		})
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
// other hard link (checkMedia). Each
// reference gets its own problem; path syntax problems are Parse's.
func checkFiles(fsys afero.Fs, dir, folder string, g *Guide) []Problem {
	var problems []Problem
	seen := map[string]string{} // rel -> problem message ("" when fine)
	for _, ref := range fileRefs(g) {
		if checkRel(ref.rel) != "" {
			continue // reported by Parse
		}
		msg, ok := seen[ref.rel]
		if !ok {
			msg = checkMedia(fsys, dir, ref.rel)
			seen[ref.rel] = msg
		}
		if msg != "" {
			problems = append(problems, Problem{File: folder + "/" + ref.rel, Path: ref.jsonPath, Message: msg})
		}
	}
	return problems
}

// checkFile returns why the bundle file rel (already syntactically safe)
// cannot be published, or "" when it is a regular file reached without a
// symbolic link.
func checkFile(fsys afero.Fs, dir, rel string) string {
	lst, canLstat := fsys.(afero.Lstater)
	els := strings.Split(rel, "/")
	cur := dir
	for i, el := range els {
		cur = filepath.Join(cur, el)
		var (
			fi  os.FileInfo
			err error
		)
		if canLstat {
			fi, _, err = lst.LstatIfPossible(cur)
		} else {
			fi, err = fsys.Stat(cur)
		}
		last := i == len(els)-1
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				return msgNotExist
			}
			return readError(err)
		}
		at := strings.Join(els[:i+1], "/")
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			if last {
				return "file is a symbolic link; bundles must hold regular files"
			}
			return fmt.Sprintf("folder %q on the way is a symbolic link; bundles must hold regular files", at)
		case !last && !fi.IsDir():
			return msgNotExist
		case last && !fi.Mode().IsRegular():
			return "not a regular file"
		}
	}
	return ""
}

// checkMedia is checkFile for a file that is published: it must also have
// no other hard link, since the other name may be a private file anywhere
// on the machine (published 0644, it would be anyone's).
func checkMedia(fsys afero.Fs, dir, rel string) string {
	if msg := checkFile(fsys, dir, rel); msg != "" {
		return msg
	}
	fi, err := fsys.Stat(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		return readError(err)
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
