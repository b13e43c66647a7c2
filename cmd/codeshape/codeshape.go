// Command codeshape checks the shape of the module's Go source: that no
// function of it is longer than MaxFuncLines (docs/testing.md). It prints
// each function that is, with its file and line, and exits 1; its test
// runs the same check, so both `make lint` and `make test` fail on a
// function that grew too long.
//
// Usage:
//
//	go run ./cmd/codeshape [module root]
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

func main() {
	flag.Parse()
	root := "."
	if flag.NArg() > 0 {
		root = flag.Arg(0)
	}
	long, err := LongFuncs(root, MaxFuncLines)
	if err != nil {
		fmt.Fprintln(os.Stderr, "codeshape:", err)
		os.Exit(2)
	}
	for _, f := range long {
		fmt.Printf("%s, over %d: cut it into named steps\n", f, MaxFuncLines)
	}
	if len(long) > 0 {
		os.Exit(1)
	}
}

// MaxFuncLines is the most lines a function may span, from its func
// keyword to its closing brace, the function literals inside it included.
const MaxFuncLines = 80

// Func is a function and the lines it spans.
type Func struct {
	Pos   token.Position // of the func keyword; Filename is relative to the folder walked
	Name  string         // "Recv.Name" for a method, "func literal" for one outside any function
	Lines int
}

func (f Func) String() string {
	return fmt.Sprintf("%s:%d: %s is %d lines long", f.Pos.Filename, f.Pos.Line, f.Name, f.Lines)
}

// LongFuncs returns the functions longer than maxLines of the Go files
// under root, sorted by file and line. It skips test files, generated
// files (a "Code generated ... DO NOT EDIT." header), folders named
// testdata or node_modules or starting with "." or "_" (which the go
// command ignores too), and folders holding another module's go.mod. It
// returns an error if a file cannot be read or parsed.
func LongFuncs(root string, maxLines int) ([]Func, error) {
	var long []Func
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && skipDir(path, d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if ast.IsGenerated(f) {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		for _, fn := range funcs(fset, f) {
			if fn.Lines > maxLines {
				fn.Pos.Filename = filepath.ToSlash(rel)
				long = append(long, fn)
			}
		}
		return nil
	})
	slices.SortFunc(long, func(a, b Func) int {
		return cmpPos(a.Pos, b.Pos)
	})
	return long, err
}

// skipDir says whether the folder at path, named name, holds no source
// of the module.
func skipDir(path, name string) bool {
	if name == "testdata" || name == "node_modules" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
		return true
	}
	_, err := os.Stat(filepath.Join(path, "go.mod"))
	return err == nil
}

// funcs returns the functions and methods of f, and the function
// literals outside them (in a package-level var), with their lengths.
func funcs(fset *token.FileSet, f *ast.File) []Func {
	var out []Func
	span := func(n ast.Node, name string) {
		start, end := fset.Position(n.Pos()), fset.Position(n.End())
		out = append(out, Func{Pos: start, Name: name, Lines: end.Line - start.Line + 1})
	}
	for _, decl := range f.Decls {
		switch decl := decl.(type) {
		case *ast.FuncDecl:
			span(decl, funcName(decl))
		case *ast.GenDecl:
			ast.Inspect(decl, func(n ast.Node) bool {
				if lit, ok := n.(*ast.FuncLit); ok {
					span(lit, "func literal")
					return false
				}
				return true
			})
		}
	}
	return out
}

// funcName returns the name of a function, or Recv.Name for a method.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
			continue
		case *ast.IndexExpr:
			t = x.X
			continue
		case *ast.IndexListExpr:
			t = x.X
			continue
		case *ast.Ident:
			return x.Name + "." + fd.Name.Name
		}
		return fd.Name.Name
	}
}

func cmpPos(a, b token.Position) int {
	if c := strings.Compare(a.Filename, b.Filename); c != 0 {
		return c
	}
	return a.Line - b.Line
}
