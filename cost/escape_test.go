package cost

import (
	"go/ast"
	"go/token"
	"go/types"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/go/ssa"
	"golang.org/x/tools/go/ssa/ssautil"
)

// TestEscapes classifies the allocations of a package by the escape
// analysis the compiler (go build -gcflags=-m) prints for it.
func TestEscapes(t *testing.T) {
	const src = `package p

import "unsafe"

type T struct{ a, b int }

var sink any

func lits(n int) *T {
	p := &T{n, n}
	q := &T{1, 2}
	x := new(T)
	sink = x
	_ = q.a
	return p
}

func makes(n int) int {
	b := make([]byte, 16)
	c := make([]byte, n)
	e := make([]byte, n)
	sink = e
	return len(b) + len(c)
}

func vars(f float64) (uint64, *int) {
	w, v := 7, 8
	sink = &v
	return *(*uint64)(unsafe.Pointer(&f)) + uint64(w), &w
}

func sum(xs ...int) int { return len(xs) }

func keep(xs ...int) { sink = xs }

func variadic(n int) int {
	keep(n, n)
	return sum(n, 1)
}

func closures() (func() int, int) {
	k, j := 0, 0
	inc := func() { k++ }
	inc()
	return func() int { j++; return j }, k
}
`
	pkg, f, esc := buildCompiled(t, src)
	// The allocations of each function, in order, as go/ssa and as the
	// compiler place them.
	want := map[string]string{
		"lits":     "&T{…}:heap &T{…}:stack new(T):heap",
		"makes":    "make([]byte, 16):stack make([]byte, n):stack make([]byte, n):heap",
		"vars":     "f:stack w:heap v:heap",
		"closures": "k:stack j:heap func literal:stack func literal:heap",
		"variadic": "varargs:heap varargs:stack",
	}
	for name, w := range want {
		var got []string
		fn := pkg.Func(name)
		for _, b := range append(fn.Blocks, anonBlocks(fn)...) {
			for _, instr := range b.Instrs {
				var what string
				switch in := instr.(type) {
				case *ssa.Alloc:
					if !in.Heap {
						continue
					}
					what = in.Comment
					if what == "complit" || what == "new" || what == "makeslice" {
						what = source(pkg.Prog.Fset, f, in.Pos())
					}
				case *ssa.MakeSlice:
					what = source(pkg.Prog.Fset, f, in.Pos())
				case *ssa.MakeClosure:
					what = "func literal"
				default:
					continue
				}
				place := "heap"
				if onStack(instr, esc) {
					place = "stack"
				}
				got = append(got, what+":"+place)
			}
		}
		if g := strings.Join(got, " "); g != w {
			t.Errorf("%s:\n got %s\nwant %s", name, g, w)
		}
	}
	// The table's weights follow.
	tb := Default().WithEscapes(esc)
	for _, b := range pkg.Func("lits").Blocks {
		for _, instr := range b.Instrs {
			if a, ok := instr.(*ssa.Alloc); ok && onStack(a, esc) && tb.Weight(a) != tb.Class("alloc.local") {
				t.Errorf("%s on the stack weighs %d, want alloc.local's %d", a, tb.Weight(a), tb.Class("alloc.local"))
			}
		}
	}
}

// buildCompiled builds src, package p, in go/ssa form and with the go
// command, returning the compiler's decisions on it.
func buildCompiled(t *testing.T, src string) (*ssa.Package, *ast.File, *Escapes) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module p\n\ngo 1.22\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	pkg, fset, f := buildSrc(t, filepath.Join(dir, "p.go"), src)
	esc, err := BuildEscapes(dir, fset, []*ast.File{f})
	if err != nil {
		t.Fatal(err)
	}
	return pkg, f, esc
}

// anonBlocks returns the blocks of fn's function literals.
func anonBlocks(fn *ssa.Function) []*ssa.BasicBlock {
	var bs []*ssa.BasicBlock
	for _, a := range fn.AnonFuncs {
		bs = append(bs, a.Blocks...)
	}
	return bs
}

// source returns the text of the call or composite literal of f whose
// Lparen or Lbrace is at pos, from its start.
func source(fset *token.FileSet, f *ast.File, pos token.Pos) string {
	var s string
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.UnaryExpr:
			if lit, ok := n.X.(*ast.CompositeLit); ok && lit.Lbrace == pos {
				s = types.ExprString(n)
			}
		case *ast.CallExpr:
			if n.Lparen == pos {
				s = types.ExprString(n)
			}
		}
		return s == ""
	})
	return s
}

// TestInlining classifies calls and returns by the inlining decisions the
// compiler (go build -gcflags=-m) prints for a package.
func TestInlining(t *testing.T) {
	const src = `package p

type T struct{ x int }

func (t *T) Get() int { return t.x }

func small(a, b int) int { return a + b }

//go:noinline
func kept(a int) int { return a * 3 }

func Max[E int | float64](a, b E) E {
	if small(1, 2) > 0 && a > b {
		return a
	}
	return b
}

func Use(t *T, f func(int) int) int {
	g := func(x int) int { return x * 2 }
	return small(t.Get(), kept(4)) + f(1) + g(2) + Max(1, 2)
}
`
	pkg, _, esc := buildCompiled(t, src)
	funcs := map[string]*ssa.Function{}
	for fn := range ssautil.AllFunctions(pkg.Prog) {
		if fn.Pkg == pkg {
			funcs[fn.Name()] = fn
		}
	}
	// The calls and returns of each function, in order.
	want := map[string]string{
		"Get":   "return.inline",
		"small": "return.inline",
		"kept":  "return",
		// Max's call of small is reported only where Max is
		// instantiated: inlined, as small can be.
		"Max": "call.inline return.inline return.inline",
		// The closure g is called directly, and inlined.
		"Use": "call.inline call.static call.inline call.closure call.inline call.inline return",
	}
	for name, w := range want {
		var got []string
		for _, b := range funcs[name].Blocks {
			for _, instr := range b.Instrs {
				switch instr.(type) {
				case *ssa.Call, *ssa.Return:
					c, _ := esc.Classify(instr)
					got = append(got, c)
				}
			}
		}
		if g := strings.Join(got, " "); g != w {
			t.Errorf("%s:\n got %s\nwant %s", name, g, w)
		}
	}
}

// TestUncountedWrappers checks that a call the compiler inlines of a
// package the build does not count weighs call.uncounted where the callee
// wraps code without a body (strings.Compare: bytealg.CompareString, the
// runtime's assembly), and call.inline where it does not
// (strings.HasPrefix).
func TestUncountedWrappers(t *testing.T) {
	const src = `package p

import "strings"

func F(a, b string) int {
	if strings.HasPrefix(a, b) {
		return 1
	}
	return strings.Compare(a, b)
}
`
	pkg, _, esc := buildCompiled(t, src)
	tb := Default().WithEscapes(esc).WithUncounted(func(path string) bool { return path == "strings" }, goroot(t))
	var got []string
	for _, b := range pkg.Func("F").Blocks {
		for _, instr := range b.Instrs {
			if call, ok := instr.(*ssa.Call); ok {
				c, _ := classify(call, tb.esc, tb.uncounted)
				got = append(got, call.Call.Value.Name()+" "+c)
			}
		}
	}
	if g, w := strings.Join(got, ", "), "HasPrefix call.inline, Compare call.uncounted"; g != w {
		t.Errorf("got %s, want %s", g, w)
	}
}

// goroot returns the GOROOT of the go command on PATH.
func goroot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}
