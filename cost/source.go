package cost

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/tools/go/ssa"
)

// callsBodiless reports whether fn, a function of another package that
// the build does not count (imported: go/ssa has no body for it), calls a
// function declared without a body — assembly, or a body the linker
// supplies (go:linkname) —, in its own body or in those of the functions
// it calls by name, three levels of calls at most; read from the source
// files (in goroot for the standard library's packages, which the
// compiler's export data places in "$GOROOT", or, in a -trimpath build,
// under their import path). Such a function is a wrapper of uncounted
// code even where the compiler inlines it: strings.Compare calls
// internal/bytealg.CompareString, which is "return
// abigen_runtime_cmpstring(a, b)". The compiler's intrinsics
// (intrinsicPackages: internal/runtime/sys.GetCallerPC) are no such
// functions. It reports false where the source cannot be read.
func callsBodiless(fn *ssa.Function, goroot string) bool {
	if fn == nil {
		return false
	}
	if fn.Origin() != nil {
		fn = fn.Origin() // (an instance has no package of its own)
	}
	obj, ok := fn.Object().(*types.Func)
	if !ok || obj.Pkg() == nil || fn.Prog == nil || !fn.Pos().IsValid() {
		return false
	}
	pos := fn.Prog.Fset.Position(fn.Pos())
	path := obj.Pkg().Path()
	file := filepath.ToSlash(pos.Filename)
	if rest, ok := strings.CutPrefix(file, "$GOROOT/"); ok && goroot != "" {
		file = filepath.ToSlash(filepath.Join(goroot, rest))
	} else if strings.HasPrefix(file, path+"/") && goroot != "" {
		file = filepath.ToSlash(filepath.Join(goroot, "src", file)) // -trimpath
	}
	dir := filepath.Dir(filepath.FromSlash(file))
	if !filepath.IsAbs(dir) || !strings.HasSuffix(filepath.ToSlash(dir), "/"+path) {
		return false
	}
	root := dir[:len(dir)-len(path)-1] // the directory of import paths
	sources.Lock()
	defer sources.Unlock()
	key := declAt{filepath.Join(dir, filepath.Base(file)), pos.Line}
	if r, ok := sources.wraps[key]; ok {
		return r
	}
	decl := sources.dir(dir).funcs[declAt{filepath.Base(file), pos.Line}]
	r := decl != nil && sources.callsBodiless(root, dir, decl, 2)
	sources.wraps[key] = r
	return r
}

// callsBodiless reports whether decl, a function of the package in dir,
// calls a function without a body, or one that does within depth more
// calls.
func (c *sourceCache) callsBodiless(root, dir string, decl *ast.FuncDecl, depth int) bool {
	if decl.Body == nil {
		return true
	}
	pkg := c.dir(dir)
	found := false
	ast.Inspect(decl.Body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || found {
			return !found
		}
		var callee *ast.FuncDecl
		calleeDir := dir
		switch f := call.Fun.(type) {
		case *ast.Ident:
			callee = pkg.byName[f.Name]
		case *ast.SelectorExpr:
			if x, ok := f.X.(*ast.Ident); ok {
				if imp, ok := pkg.imports[decl][x.Name]; ok && !intrinsicPackages[imp] {
					calleeDir = c.importDir(root, imp)
					callee = c.dir(calleeDir).byName[f.Sel.Name]
				}
			}
		}
		if callee != nil && (callee.Body == nil || depth > 0 && c.callsBodiless(root, calleeDir, callee, depth-1)) {
			found = true
		}
		return !found
	})
	return found
}

// sources caches the packages callsBodiless has read, by directory, and
// its answers, by function.
var sources = sourceCache{dirs: map[string]*sourcePkg{}, wraps: map[declAt]bool{}, imports: map[string]string{}}

type sourceCache struct {
	sync.Mutex
	dirs    map[string]*sourcePkg
	wraps   map[declAt]bool   // by file (its path) and line
	imports map[string]string // importDir's answers, by root and path
}

// importDir returns the directory of the package imported as path from
// the tree of import paths at root (GOROOT/src: its own, or vendor's).
func (c *sourceCache) importDir(root, path string) string {
	key := root + "\x00" + path
	if d, ok := c.imports[key]; ok {
		return d
	}
	d := filepath.Join(root, filepath.FromSlash(path))
	if _, err := os.Stat(d); err != nil {
		d = filepath.Join(root, "vendor", filepath.FromSlash(path))
	}
	c.imports[key] = d
	return d
}

// importName is the name a package imported as path usually has: its
// last element, or the one before a major version (math/rand/v2: rand).
func importName(path string) string {
	elems := strings.Split(path, "/")
	last := elems[len(elems)-1]
	if len(elems) > 1 && len(last) > 1 && last[0] == 'v' && strings.Trim(last[1:], "0123456789") == "" {
		return elems[len(elems)-2]
	}
	return last
}

// A sourcePkg is what callsBodiless knows of a package's source, in the
// files GOOS and GOARCH select (those of kprof's environment, which the go
// command sets for the build's tools; not -tags): the functions (not
// methods) it declares, by file and line of their names and by name, and
// the imports of the file of each (name to path).
type sourcePkg struct {
	funcs   map[declAt]*ast.FuncDecl
	byName  map[string]*ast.FuncDecl
	imports map[*ast.FuncDecl]map[string]string
}

type declAt struct {
	file string
	line int
}

// dir returns the package in directory dir, read on first use; a
// directory it cannot read gives an empty package.
func (c *sourceCache) dir(dir string) *sourcePkg {
	if p := c.dirs[dir]; p != nil {
		return p
	}
	p := &sourcePkg{funcs: map[declAt]*ast.FuncDecl{}, byName: map[string]*ast.FuncDecl{}, imports: map[*ast.FuncDecl]map[string]string{}}
	c.dirs[dir] = p
	ents, err := os.ReadDir(dir)
	if err != nil {
		return p
	}
	fset := token.NewFileSet()
	for _, e := range ents {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		if ok, err := build.Default.MatchFile(dir, name); err != nil || !ok {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			continue
		}
		imports := map[string]string{}
		for _, im := range f.Imports {
			path, err := strconv.Unquote(im.Path.Value)
			if err != nil {
				continue
			}
			local := importName(path)
			if im.Name != nil {
				local = im.Name.Name
			}
			imports[local] = path
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv != nil {
				continue
			}
			p.funcs[declAt{name, fset.Position(fd.Name.Pos()).Line}] = fd
			p.byName[fd.Name.Name] = fd
			p.imports[fd] = imports
		}
	}
	return p
}
