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

// Escapes holds the compiler's escape analysis of a package: which of its
// allocation sites go/ssa places on the heap the compiler keeps on the
// stack. go/ssa decides from the syntax alone (a variable whose address is
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
}

// diagLine matches a diagnostic of the compiler's -m flag about escapes:
// file, line, column, message.
var diagLine = regexp.MustCompile(`^(.*\.go):(\d+):(\d+): (.*)$`)

// ParseEscapes reads the escape diagnostics in out, the output of the
// compiler's -m flag on files (parsed in fset), and returns the decisions
// on their allocation sites. Diagnostics about other files (inlined
// bodies of other packages) and of other kinds are ignored.
func ParseEscapes(out []byte, fset *token.FileSet, files []*ast.File) *Escapes {
	e := &Escapes{sites: map[token.Pos]bool{}, moved: map[token.Pos]bool{}}
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

// site reports whether the compiler puts the allocation site at pos (its
// go/ssa position) on the heap, and whether it said.
func (e *Escapes) site(pos token.Pos) (heap, known bool) {
	heap, known = e.sites[pos]
	return heap, known
}

// movedVar reports whether the compiler moved the variable declared at
// pos to the heap.
func (e *Escapes) movedVar(pos token.Pos) bool { return e.moved[pos] }

// Classify is the package function Classify under e: an allocation the
// compiler keeps on the stack is of class alloc.local. A nil e is no
// escape analysis.
func (e *Escapes) Classify(instr ssa.Instruction) (class string, bytes int64) {
	return classify(instr, e)
}
