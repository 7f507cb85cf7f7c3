package kprof

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestPackageDocs checks that every package of the module (testdata, the
// toolchain's patch files and the paper's workloads aside) has a doc comment saying what it owns.
func TestPackageDocs(t *testing.T) {
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if name := d.Name(); name == "testdata" || strings.HasPrefix(name, ".") && path != "." {
			return filepath.SkipDir
		}
		if path == filepath.Join("toolchain", "patches") {
			return filepath.SkipDir // files added to the Go toolchain's own packages
		}
		if strings.HasPrefix(path, filepath.Join("bench", "workloads")+string(filepath.Separator)) {
			return nil // the paper's workloads: programs, documented by bench/workloads
		}
		pkgs, err := parser.ParseDir(token.NewFileSet(), path, func(fi fs.FileInfo) bool {
			return !strings.HasSuffix(fi.Name(), "_test.go")
		}, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			return err
		}
		for name, pkg := range pkgs {
			documented := false
			for _, f := range pkg.Files {
				documented = documented || f.Doc != nil && strings.TrimSpace(f.Doc.Text()) != ""
			}
			if !documented {
				t.Errorf("package %s (%s) has no doc comment", name, path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
