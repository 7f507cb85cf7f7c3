package toolchain

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

//go:embed patches
var patchFS embed.FS

// An Edit replaces Old, which must occur exactly once in the file, by New.
type Edit struct{ Old, New string }

// A Field is a field appended to a struct type of a patched file (last:
// the compiler and the assembly know the offsets of the first fields).
type Field struct{ Struct, Decl string }

// A PackagePatch is what a release changes in one standard package's
// compile step.
type PackagePatch struct {
	Edits      map[string][]Edit // by file base name
	Fields     map[string]Field  // by file base name
	ReplaceAll map[string][]Edit // every occurrence, by file base name
}

// A Release is the patch set for one Go release.
type Release struct {
	Name     string                   // "go1.26": every go1.26.x
	Dirs     []string                 // directories under patches/, first wins
	Compiler map[string][]Edit        // by path under cmd/compile/internal
	Packages map[string]*PackagePatch // by import path
}

// releases is the registry, oldest first.
var releases = []*Release{go126, go127}

// Supported names the supported releases for messages: "go1.26.x and
// go1.27.x".
func Supported() string {
	var names []string
	for _, r := range releases {
		names = append(names, r.Name+".x")
	}
	if len(names) == 1 {
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// Lookup returns the release of a go command's version (go env GOVERSION:
// "go1.27.3", "go1.26.0", "go1.27rc1").
func Lookup(goVersion string) (*Release, error) {
	v := strings.TrimSpace(goVersion)
	if i := strings.IndexAny(v, " -"); i >= 0 {
		v = v[:i] // "go1.27.3 X:nocoverageredesign", "go1.27-devel"
	}
	for _, r := range releases {
		if v == r.Name || strings.HasPrefix(v, r.Name+".") || strings.HasPrefix(v, r.Name+"rc") {
			return r, nil
		}
	}
	return nil, fmt.Errorf("kprof supports %s; the go command here is %s (set GOTOOLCHAIN, e.g. GOTOOLCHAIN=go1.27.3, or PATH to a supported Go)", Supported(), goVersion)
}

// Oldest is the oldest supported release: the language version of code
// that every supported toolchain compiles (kprof's linked-in packages).
func Oldest() *Release { return releases[0] }

// unsupported is the error for a source file without the expected shape.
func (r *Release) unsupported(pkg, goVersion, what string) error {
	return fmt.Errorf("kprof: %s of %s does not have the shape kprof's %s patch expects (%s); kprof supports %s", pkg, goVersion, r.Name, what, Supported())
}

// addedFiles returns the files the release adds to dir (a package's
// directory under the release directories: "runtime", "compile/ssa"), by
// base name, their kprofpatch constraint removed.
func (r *Release) addedFiles(dir string) (map[string][]byte, error) {
	files := make(map[string][]byte)
	for _, d := range r.Dirs {
		entries, err := fs.ReadDir(patchFS, path.Join("patches", d, dir))
		if err != nil {
			continue // this directory has nothing for dir
		}
		for _, e := range entries {
			if _, ok := files[e.Name()]; ok || e.IsDir() {
				continue
			}
			data, err := fs.ReadFile(patchFS, path.Join("patches", d, dir, e.Name()))
			if err != nil {
				return nil, err
			}
			files[e.Name()] = stripConstraint(data)
		}
	}
	return files, nil
}

// stripConstraint removes the kprofpatch build constraint line.
func stripConstraint(src []byte) []byte {
	const line = "//go:build kprofpatch\n"
	if bytes.HasPrefix(src, []byte(line)) {
		// Keep the line count: a blank line in its place.
		return append([]byte("\n"), src[len(line):]...)
	}
	return src
}

// applyEdits applies edits to src; what returns the error for a source
// that does not have the expected shape.
func applyEdits(src []byte, file string, edits []Edit, what func(string) error) ([]byte, error) {
	for _, e := range edits {
		if bytes.Count(src, []byte(e.Old)) != 1 {
			return nil, what(fmt.Sprintf("%s: %q", file, strings.TrimSpace(e.Old)))
		}
		src = bytes.Replace(src, []byte(e.Old), []byte(e.New), 1)
	}
	return src, nil
}

// PatchPackage rewrites the compile step of the standard package pkg
// ("runtime", "sync", "testing"): the release's edits applied to its files
// (written to workDir, each starting with a //line directive that keeps
// the original name and line numbers) and the release's files for it
// added. extra are more files to add (name to text). It returns the new
// list of Go files and fails closed.
func (r *Release) PatchPackage(pkg, goVersion string, files []string, workDir string, extra map[string]string) ([]string, error) {
	pp := r.Packages[pkg]
	if pp == nil {
		return nil, fmt.Errorf("kprof: the %s patch set has nothing for package %s", r.Name, pkg)
	}
	what := func(w string) error { return r.unsupported("package "+pkg, goVersion, w) }
	want := make(map[string]bool)
	for _, m := range []map[string][]Edit{pp.Edits, pp.ReplaceAll} {
		for f := range m {
			want[f] = true
		}
	}
	for f := range pp.Fields {
		want[f] = true
	}
	out := make([]string, 0, len(files)+len(extra)+2)
	for _, f := range files {
		base := filepath.Base(f)
		if !want[base] {
			out = append(out, f)
			continue
		}
		delete(want, base)
		src, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		if fd, ok := pp.Fields[base]; ok {
			end, err := structEnd(f, src, fd.Struct)
			if err != nil {
				return nil, what(err.Error())
			}
			src = append(src[:end:end], append([]byte(fd.Decl+"; "), src[end:]...)...)
		}
		if src, err = applyEdits(src, base, pp.Edits[base], what); err != nil {
			return nil, err
		}
		for _, e := range pp.ReplaceAll[base] {
			if !bytes.Contains(src, []byte(e.Old)) {
				return nil, what(fmt.Sprintf("%s: %q", base, e.Old))
			}
			src = bytes.ReplaceAll(src, []byte(e.Old), []byte(e.New))
		}
		src = append([]byte(fmt.Sprintf("//line %s:1:1\n", f)), src...)
		nf := filepath.Join(workDir, base)
		if err := os.WriteFile(nf, src, 0o666); err != nil {
			return nil, err
		}
		out = append(out, nf)
	}
	if len(want) > 0 {
		return nil, what(strings.Join(sortedKeys(want), ", ") + " not found")
	}
	added, err := r.addedFiles(pkg)
	if err != nil {
		return nil, err
	}
	for name, text := range extra {
		added[name] = []byte(text)
	}
	for _, name := range sortedKeys(added) {
		nf := filepath.Join(workDir, name)
		if err := os.WriteFile(nf, added[name], 0o666); err != nil {
			return nil, err
		}
		out = append(out, nf)
	}
	return out, nil
}
