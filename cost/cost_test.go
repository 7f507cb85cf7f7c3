package cost

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"strings"
	"testing"

	"golang.org/x/tools/go/ssa"
	"golang.org/x/tools/go/ssa/ssautil"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name, in, err string
	}{
		{"ok", "# c\nname t\nscale 3\nother 7 # trailing\nint.arith 2\n", ""},
		{"no name", "scale 3\nother 7\n", "no name line"},
		{"no scale", "name t\nother 7\n", "no scale line"},
		{"no other", "name t\nscale 3\n", "no weight for class other"},
		{"zero", "name t\nscale 3\nother 0\n", `line 3: other "0": want an integer number of picoseconds from 1 to 10^12`},
		{"not a number", "name t\nscale x\nother 1\n", `line 2: scale "x": want an integer number of picoseconds from 1 to 10^12`},
		{"unknown", "name t\nscale 3\nother 1\nint.add 4\n", `line 4: unknown class "int.add" (kprof calibrate writes a complete table)`},
		{"twice", "name t\nscale 3\nother 1\nother 2\n", "line 4: class other given twice"},
		{"fields", "name t\nscale 3 4\n", `line 2: want "class weight", got "scale 3 4"`},
		{"two names", "name t\nname u\n", "line 2: a second name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb, err := Parse([]byte(tt.in))
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tb.Name != "t" || tb.Scale != 3 || tb.Class("other") != 7 || tb.Class("int.arith") != 2 || tb.Class("load") != 7 {
				t.Errorf("parsed %+v", tb)
			}
		})
	}
}

// TestMissing checks that Missing names the classes a table leaves out,
// growth ones included, and none of the shipped table's.
func TestMissing(t *testing.T) {
	if miss := Default().Missing(); len(miss) != 0 {
		t.Errorf("the shipped table misses %v", miss)
	}
	full := Default().Format()
	var lines []string
	for _, l := range strings.Split(string(full), "\n") {
		if !strings.HasPrefix(l, "call.inline ") && !strings.HasPrefix(l, GrowByteClass+" ") {
			lines = append(lines, l)
		}
	}
	tb, err := Parse([]byte(strings.Join(lines, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(tb.Missing(), " "), "call.inline "+GrowByteClass; got != want {
		t.Errorf("Missing() = %q, want %q", got, want)
	}
}

// TestIdent checks that a table's ident depends on its name and weights,
// not on comments or order, and that Format round-trips.
func TestIdent(t *testing.T) {
	a, err := Parse([]byte("name t\nscale 3\nother 7\nint.arith 2\n"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Parse([]byte("# comment\nint.arith 2\nother 7\nscale 3\nname t\n"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := Parse([]byte("name t\nscale 3\nother 7\nint.arith 3\n"))
	if err != nil {
		t.Fatal(err)
	}
	if a.Ident() != b.Ident() || a.Ident() == c.Ident() || !strings.HasPrefix(a.Ident(), "t@") || len(a.Ident()) != len("t@")+16 {
		t.Errorf("idents %s %s %s", a.Ident(), b.Ident(), c.Ident())
	}
	back, err := Parse(a.Format())
	if err != nil || back.Ident() != a.Ident() {
		t.Errorf("Format round trip: %v, %s vs %s", err, back.Ident(), a.Ident())
	}
	d := Default()
	if d.Class("other") < 1 || d.Scale < 1 {
		t.Errorf("default table %+v", d)
	}
	for _, c := range Classes {
		if _, ok := d.Weights[c]; !ok {
			t.Errorf("the default table has no weight for %s", c)
		}
	}
}

// TestClassify checks the class of each instruction of a few functions.
func TestClassify(t *testing.T) {
	const src = `package p

type T struct{ a, b int; f float64 }

type I interface{ M() int }

func (t *T) M() int { return t.a }

var g int
var m = map[string]int{}

func arith(x, y int, f float64) int {
	return x*y + x/y + x%7 + int(f/2) + x%8 + x/1
}

func mem(t *T, s []int, i int) int {
	s[i] = t.a
	return s[i+1] + len(s)
}

func local(v T) int { return v.a + v.b }

func alloc(n int) (*T, []int, any, string) {
	return &T{a: n}, make([]int, 4), n, string(rune(n))
}

func calls(i I, f func() int) int { return i.M() + f() + len(m) + m["x"] }

func appends(s []int, t []int, b []byte, x string) ([]int, []byte) {
	return append(append(s, 1, 2), t...), append(b, x...)
}

func errs(e error, i, j any) bool { return e != nil && i == j }

type Float interface{ ~float32 | ~float64 }

type Ordered interface{ ~int | ~int64 | ~string | Float }

func generic[F Float, O Ordered, S ~string, C comparable](f F, o O, s S, c C) bool {
	return f < f && o < o && s < s && c == c
}
`
	pkg, _, _ := buildSrc(t, "p.go", src)
	// (make([]int, 4) is a heap array and a slice of it in go/ssa.)
	want := map[string]string{
		"arith": "int.mul int.div int.arith int.divconst int.arith float.div convert.num int.arith int.arith int.arith int.arith int.arith return",
		"mem":   "fieldaddr load indexaddr store int.arith indexaddr load call.builtin int.arith return",
		"local": "alloc.local local.store local.addr local.load local.addr local.load int.arith return",
		"alloc": "alloc.heap:24 fieldaddr store alloc.heap:32 slice iface.box convert.num convert.string return",
		"calls": "call.invoke call.closure int.arith load call.builtin int.arith load map.lookup int.arith return",
		// append's listed values need no array (the compiler stores them
		// in place); a slice or string appended is a copy.
		"appends": "alloc.local indexaddr store indexaddr store slice append.value call.append call.append return",
		// A comparison with nil is one word's; one of interfaces two.
		"errs": "int.cmp if value.cmp jump other return",
		// Type parameters: by the kind their type set shares, else int.
		"generic": "float.cmp if int.cmp jump other return string.cmp if int.cmp if",
	}
	for name, w := range want {
		var got []string
		for _, b := range pkg.Func(name).Blocks {
			for _, instr := range b.Instrs {
				c, n := Classify(instr)
				if n > 0 {
					c += ":" + itoa(n)
				}
				got = append(got, c)
			}
		}
		if g := strings.Join(got, " "); g != w {
			t.Errorf("%s:\n got %s\nwant %s", name, g, w)
		}
	}
}

// buildSrc parses src as the file name of package p and builds its go/ssa
// form.
func buildSrc(t *testing.T, name, src string) (*ssa.Package, *token.FileSet, *ast.File) {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, 0)
	if err != nil {
		t.Fatal(err)
	}
	pkg, _, err := ssautil.BuildPackage(&types.Config{Importer: importer.ForCompiler(fset, "gc", nil)}, fset, types.NewPackage("p", "p"), []*ast.File{f}, ssa.BuilderMode(0))
	if err != nil {
		t.Fatal(err)
	}
	return pkg, fset, f
}

func itoa(n int64) string {
	s := ""
	for n > 0 {
		s = string(rune('0'+n%10)) + s
		n /= 10
	}
	return s
}

// TestUncounted checks that a static call of a package the build does not
// count weighs call.uncounted, and other calls do not.
func TestUncounted(t *testing.T) {
	const src = `package p

import (
	"math/bits"
	"strings"
)

func local(a string) int { return len(a) }

func f(a, b string, g func(string) int) int {
	h, _ := bits.Mul64(uint64(len(a)), 3)
	return strings.Compare(a, b) + local(a) + g(b) + strings.Index(a, b) + int(h)
}
`
	pkg, _, _ := buildSrc(t, "p.go", src)
	// (math/bits' functions are the compiler's intrinsics.)
	tb := Default().WithUncounted(func(path string) bool { return path == "strings" || path == "math/bits" }, "")
	var got []string
	for _, b := range pkg.Func("f").Blocks {
		for _, instr := range b.Instrs {
			if call, ok := instr.(*ssa.Call); ok {
				c, _ := classify(call, nil, tb.uncounted)
				got = append(got, c)
				if c == "call.uncounted" && tb.Weight(call) != tb.Class("call.uncounted") {
					t.Errorf("%v weighs %d, want %d", call, tb.Weight(call), tb.Class("call.uncounted"))
				}
			}
		}
	}
	if g, w := strings.Join(got, " "), "call.builtin call.static call.uncounted call.static call.closure call.uncounted"; g != w {
		t.Errorf("got %s, want %s", g, w)
	}
}
