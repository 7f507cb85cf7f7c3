package rewrite

import (
	"go/ast"
	"go/constant"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"maps"
	"slices"
	"testing"

	"golang.org/x/tools/go/ssa"
	"golang.org/x/tools/go/ssa/ssautil"
)

// TestConstTestPositions checks that buildSSA gives every If on a
// constant the position of the expression it tests, that the If gets its
// constant back, and that the types.Info it borrowed is as it was.
func TestConstTestPositions(t *testing.T) {
	for _, tc := range []struct {
		name string
		body string
		want []string // the tested expressions, in source order
	}{
		{"if", "if 6%4 > 2 { x++ }", []string{"6%4 > 2"}},
		{"named", "if debug { x++ }", []string{"debug"}},
		{"not", "if !debug { x++ }", []string{"debug"}},
		{"operands", "if x > 2 && 6%4 > 2 || 1 < 0 { x++ }", []string{"6%4 > 2", "1 < 0"}},
		{"paren", "if (x > 2 || (7%2 == 1)) { x++ }", []string{"7%2 == 1"}},
		{"for", "for i := 0; debug && i < x; i++ { x-- }", []string{"debug"}},
		{"tagless", "switch { case x > 1: x++; case 2%3 == 0: x--; case debug && x > 0: }", []string{"2%3 == 0", "debug"}},
		{"value", "b := false && x > 1; _ = b", []string{"false"}},
		{"value or", "b := x > 1 || true || x > 2; _ = b", []string{"true"}},
		{"else if", "if x > 1 { x++ } else if 3%2 == 0 { x-- }", []string{"3%2 == 0"}},
		{"closure", "f := func() { if debug { x++ } }; f()", []string{"debug"}},
		{"none", "if x > 1 { x++ }; b := true; _ = b", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "package p\n\nconst debug = false\n\nfunc f(x int) int {\n\t" + tc.body + "\n\treturn x\n}\n"
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, "p.go", src, 0)
			if err != nil {
				t.Fatal(err)
			}
			in := &Input{Fset: fset, Files: []*ast.File{f}, Srcs: [][]byte{[]byte(src)}, Names: []string{"p.go"}, Path: "p", Info: NewInfo()}
			in.Pkg, err = (&types.Config{Importer: importer.Default()}).Check("p", fset, in.Files, in.Info)
			if err != nil {
				t.Fatal(err)
			}
			before := maps.Clone(in.Info.Types)
			spkg, pos := buildSSA(in)
			if !maps.Equal(in.Info.Types, before) {
				t.Errorf("types.Info changed by buildSSA")
			}
			var got []string
			for fn := range ssautil.AllFunctions(spkg.Prog) {
				if fn.Pkg != spkg {
					continue
				}
				for _, b := range fn.Blocks {
					i := endingIf(b)
					if i == nil {
						continue
					}
					k, isConst := i.Cond.(*ssa.Const)
					if !isConst {
						continue
					}
					if k.Value.Kind() != constant.Bool {
						t.Errorf("%s: the If of block %d tests %v, not a bool", fn, b.Index, k.Value)
					}
					p, ok := pos[i]
					if !ok {
						t.Errorf("%s: the If of block %d (%s) has no position", fn, b.Index, b.Comment)
						continue
					}
					off := fset.Position(p).Offset
					got = append(got, exprAt(f, in.Info, p, src[off:]))
				}
			}
			slices.Sort(got)
			want := slices.Clone(tc.want)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("tested constants at %q, want %q", got, want)
			}
		})
	}
}

// exprAt returns the source of the innermost constant condition of f
// that begins at p (rest is the source from p on): debug, not debug &&
// x > 0; 6%4 > 2, not 6.
func exprAt(f *ast.File, info *types.Info, p token.Pos, rest string) string {
	var found ast.Expr
	ast.Inspect(f, func(n ast.Node) bool {
		if e, ok := n.(ast.Expr); ok && e.Pos() == p {
			if v := info.Types[e].Value; v != nil && v.Kind() == constant.Bool {
				found = e
			}
		}
		return n != nil && n.Pos() <= p && p < n.End()
	})
	if found == nil {
		return "?" + rest
	}
	return rest[:found.End()-found.Pos()]
}
