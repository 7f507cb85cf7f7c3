package rewrite

import (
	"flag"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// instrument type-checks one file (imports from source) and instruments it.
func instrument(t *testing.T, name string, src []byte) (*Input, *Output) {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	in := &Input{Fset: fset, Files: []*ast.File{f}, Srcs: [][]byte{src}, Names: []string{name}, Path: f.Name.Name, Info: NewInfo()}
	conf := types.Config{Importer: importer.ForCompiler(fset, "source", nil)}
	in.Pkg, err = conf.Check(f.Name.Name, fset, in.Files, in.Info)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Package(in, DefaultOptions)
	if err != nil {
		t.Fatal(err)
	}
	return in, out
}

// describe renders the weights and checks of every plan, for golden files.
func describe(out *Output) string {
	var b strings.Builder
	for _, p := range out.Plans {
		fmt.Fprintf(&b, "%s leaf=%v total=%d\n", p.Name, p.Leaf, p.Total)
		for _, blk := range p.Fn.Blocks {
			fmt.Fprintf(&b, "  block %d %-16s weight %d\n", blk.Index, blk.Comment, p.Weights[blk.Index])
		}
	}
	for _, a := range out.Approx {
		fmt.Fprintf(&b, "approximate: %s\n", a)
	}
	return b.String()
}

// TestGolden instruments each rewrite/testdata/*.go file and compares the
// block weights and the rewritten source with the .golden files.
func TestGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.go")
	if len(files) == 0 {
		t.Fatal("no golden inputs")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			_, out := instrument(t, filepath.Base(file), src)
			got := describe(out) + "----\n" + string(out.Files[0])
			golden := strings.TrimSuffix(file, ".go") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o666); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("%s differs from %s; run go test ./rewrite -run TestGolden -update and review the diff\n--- got ---\n%s", file, golden, got)
			}
		})
	}
}
