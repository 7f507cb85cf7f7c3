package cost

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"golang.org/x/tools/go/ssa"
)

// Escapes holds the compiler's escape analysis of a package, which of its
// allocation sites go/ssa places on the heap the compiler keeps on the
// stack, and its inlining decisions: which calls it inlines and which
// functions it can inline (an inlined call and the callee's return cost
// next to nothing; go/ssa cannot tell). go/ssa decides from the syntax alone (a variable whose address is
// taken is a heap Alloc); the compiler proves most such variables, and
// most composite literals, new and make calls, local to their function.
// Under a table with escapes, an allocation the compiler keeps on the
// stack weighs alloc.local, as a variable in the frame does.
//
// It is read from the diagnostics of the compiler's -m flag on the
// package's own source (ParseEscapes): kprof build runs the compiler once
// more with -m for packages it instruments under the cost metric.
type Escapes struct {
	// sites maps the go/ssa position of an allocation site (see key) to
	// whether the compiler puts it on the heap.
	sites map[token.Pos]bool
	// moved holds the declarations of the variables the compiler moved
	// to the heap: every other variable stays in the frame.
	moved map[token.Pos]bool
	// varargs maps the calls (their Lparen) whose variadic arguments'
	// slice the compiler reports to whether it puts it on the heap.
	varargs map[token.Pos]bool
	// inlined holds the calls (their Lparen, go/ssa's position of a
	// call) the compiler inlined.
	inlined map[token.Pos]bool
	// inlinable holds the functions (go/ssa's position: the name of a
	// declared function, the func keyword of a literal) the compiler
	// reports it can inline.
	inlinable map[token.Pos]bool
}

// diagLine matches a diagnostic of the compiler's -m flag about escapes:
// file, line, column, message.
var diagLine = regexp.MustCompile(`^(.*\.go):(\d+):(\d+): (.*)$`)

// ParseEscapes reads the escape diagnostics in out, the output of the
// compiler's -m flag on files (parsed in fset), and returns the decisions
// on their allocation sites. Diagnostics about other files (inlined
// bodies of other packages) and of other kinds are ignored.
func ParseEscapes(out []byte, fset *token.FileSet, files []*ast.File) *Escapes {
	e := &Escapes{sites: map[token.Pos]bool{}, moved: map[token.Pos]bool{}, varargs: map[token.Pos]bool{}, inlined: map[token.Pos]bool{}, inlinable: map[token.Pos]bool{}}
	// The files by base name: the compiler prints the names it was given,
	// relative or trimmed; a package's files have distinct base names.
	byName := map[string]*ast.File{}
	for _, f := range files {
		byName[filepath.Base(fset.File(f.Pos()).Name())] = f
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		m := diagLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		f := byName[filepath.Base(m[1])]
		if f == nil {
			continue
		}
		line, _ := strconv.Atoi(m[2])
		col, _ := strconv.Atoi(m[3])
		msg := m[4]
		var heap bool
		switch {
		case strings.HasPrefix(msg, "inlining call to "):
			if pos, ok := at(fset, f, line, col); ok {
				e.inlined[pos] = true
			}
			continue
		case strings.HasPrefix(msg, "can inline "):
			if pos, ok := at(fset, f, line, col); ok {
				if k := funcKey(f, pos); k.IsValid() {
					e.inlinable[k] = true
				}
			}
			continue
		case strings.HasPrefix(msg, "... argument "):
			// A variadic call's slice: reported at the call's Lparen.
			if pos, ok := at(fset, f, line, col); ok {
				e.varargs[pos] = e.varargs[pos] || strings.HasSuffix(msg, " escapes to heap")
			}
			continue
		case strings.HasPrefix(msg, "moved to heap: "):
			if pos, ok := at(fset, f, line, col); ok {
				e.moved[pos] = true
			}
			continue
		case strings.HasSuffix(msg, " escapes to heap"):
			heap = true
		case strings.HasSuffix(msg, " does not escape"):
		default:
			continue
		}
		if pos, ok := at(fset, f, line, col); ok {
			if k := key(f, pos); k.IsValid() {
				// (One site may be reported twice, once per inlined
				// copy: on the heap if any is.)
				e.sites[k] = e.sites[k] || heap
			}
		}
	}
	return e
}

// BuildEscapes compiles the main package in dir with the go command in
// PATH and the compiler's -m flag (GOFLAGS and workspaces ignored), and
// returns its escape analysis of files, the package's files parsed in
// fset: kprof calibrate and the tests weigh a package as kprof build does.
func BuildEscapes(dir string, fset *token.FileSet, files []*ast.File) (*Escapes, error) {
	cmd := exec.Command("go", "build", "-gcflags=-m", "-o", os.DevNull, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("go build -gcflags=-m in %s: %v\n%s", dir, err, out)
	}
	return ParseEscapes(out, fset, files), nil
}

// at returns the position of line and column (in bytes, from 1) in f.
func at(fset *token.FileSet, f *ast.File, line, col int) (token.Pos, bool) {
	tf := fset.File(f.Pos())
	if line < 1 || line > tf.LineCount() {
		return token.NoPos, false
	}
	start := tf.LineStart(line)
	off := tf.Offset(start) + col - 1
	if off < 0 || off >= tf.Size() {
		return token.NoPos, false
	}
	pos := tf.Pos(off)
	// A file with //line directives reports other lines: not matched.
	if p := fset.Position(pos); p.Line != line || p.Column != col {
		return token.NoPos, false
	}
	return pos, true
}

// key returns the position go/ssa gives the allocation of the expression
// of f the compiler reports at pos: the Lbrace of a composite literal
// (&T{…}, []T{…}) that starts at pos, the Lparen of new and make calls
// (at pos: the compiler reports calls there), the func keyword of a
// function literal that starts at pos. NoPos if there is none.
func key(f *ast.File, pos token.Pos) token.Pos {
	k := token.NoPos
	ast.Inspect(f, func(n ast.Node) bool {
		if k.IsValid() || n == nil || pos < n.Pos() || pos >= n.End() {
			return false
		}
		if c, ok := n.(*ast.CallExpr); ok && c.Lparen == pos {
			// (new and make are reported at their parenthesis.)
			if id, ok := ast.Unparen(c.Fun).(*ast.Ident); ok && (id.Name == "new" || id.Name == "make") {
				k = pos
			}
			return false
		}
		if n.Pos() != pos {
			return true
		}
		switch n := n.(type) {
		case *ast.UnaryExpr:
			if lit, ok := ast.Unparen(n.X).(*ast.CompositeLit); ok && n.Op == token.AND {
				k = lit.Lbrace
			}
		case *ast.CompositeLit:
			k = n.Lbrace
		case *ast.FuncLit:
			k = n.Type.Func
		}
		return !k.IsValid()
	})
	return k
}

// funcKey returns the go/ssa position of the function the compiler
// reports at pos: it names a declared function where its receiver or name
// starts (go/ssa: the name), a function literal at its func keyword.
func funcKey(f *ast.File, pos token.Pos) token.Pos {
	k := token.NoPos
	ast.Inspect(f, func(n ast.Node) bool {
		if k.IsValid() || n == nil || pos < n.Pos() || pos >= n.End() {
			return false
		}
		switch n := n.(type) {
		case *ast.FuncDecl:
			if (n.Recv != nil && n.Recv.Opening == pos) || n.Name.Pos() == pos {
				k = n.Name.Pos()
			}
		case *ast.FuncLit:
			if n.Type.Func == pos {
				k = pos
			}
		}
		return !k.IsValid()
	})
	return k
}

// site reports whether the compiler puts the allocation site at pos (its
// go/ssa position) on the heap, and whether it said.
func (e *Escapes) site(pos token.Pos) (heap, known bool) {
	heap, known = e.sites[pos]
	return heap, known
}

// movedVar reports whether the compiler moved the variable declared at
// pos to the heap.
func (e *Escapes) movedVar(pos token.Pos) bool { return e.moved[pos] }

// inlinedCall reports whether the compiler inlines call. In a generic
// function, whose calls the compiler reports only where a package
// instantiates it, a static call of a function of the package the
// compiler can inline counts as inlined.
func (e *Escapes) inlinedCall(call *ssa.Call) bool {
	if e.inlined[call.Pos()] {
		return true
	}
	fn := call.Parent()
	if fn == nil || !generic(fn) {
		return false
	}
	callee := call.Call.StaticCallee()
	return callee != nil && callee.Pkg == fn.Pkg && e.inlinableFunc(callee)
}

// inlinableFunc reports whether the compiler can inline fn.
func (e *Escapes) inlinableFunc(fn *ssa.Function) bool {
	if fn.Origin() != nil {
		fn = fn.Origin()
	}
	return fn.Pos().IsValid() && e.inlinable[fn.Pos()]
}

// generic reports whether fn's body is, or is within, a generic
// function's.
func generic(fn *ssa.Function) bool {
	for ; fn != nil; fn = fn.Parent() {
		if fn.TypeParams().Len() > 0 || fn.Origin() != nil {
			return true
		}
	}
	return false
}

// Classify is the package function Classify under e: an allocation the
// compiler keeps on the stack is of class alloc.local. A nil e is no
// escape analysis.
func (e *Escapes) Classify(instr ssa.Instruction) (class string, bytes int64) {
	return classify(instr, e, nil)
}
