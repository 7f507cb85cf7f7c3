// Package calibrate fits a cost table (package cost) on the machine it
// runs on: kprof calibrate.
//
// # Method
//
// Micro-benchmarks and a regression. The kernels (kernels.go.txt) are
// small functions kN(n) whose loop runs a branch-free body n times, each
// dominated by one class of go/ssa instructions (integer and float
// arithmetic, division, loads, stores, calls of each kind, allocation of
// several sizes, maps, channels, strings, conversions, …). Measure builds
// them with the plain go toolchain and times each (the fastest of a few
// rounds of about 20 ms: picoseconds per iteration). Count builds their
// go/ssa form, as kprof's instrumenter does, and counts the instructions
// of each class one iteration runs: those of the loop's blocks, and those
// of the functions they call (the callee found statically, or by class
// hierarchy analysis for interface and function-value calls; the
// wrappers kprof does not count left out). Fit then finds the weights w
// (one per class, in picoseconds) that minimise the relative error of
// predicting each kernel's time as Σ counts·w, non-negative (Lawson and
// Hanson's NNLS), with a weak pull towards a prior table so that classes
// no kernel separates (a loop's own compare, branch and jump are in every
// kernel) keep plausible weights: rows λ·(w_c − prior_c)/prior_c, λ =
// PriorWeight. A class no kernel runs keeps its prior weight.
//
// The counts classify instructions as kprof build does, with the
// compiler's escape analysis and inlining decisions (cost.Escapes): a
// call the compiler inlines is call.inline.
//
// What the method does not capture: the garbage collector's work grows
// with the live heap, which the kernels keep small; the compiler keeps
// values in registers and folds operations into addressing modes, which
// go/ssa counts cannot tell; out-of-order execution overlaps independent
// instructions, so a class weighs between what a chain of it takes and
// what independent ones do (kArith and kArithILP, kMul and kMulILP: the
// fit's compromise); a load's time depends on where its data is (the
// kernels' hit the L1 cache: a chain of dependent loads, as in a walk
// over a linked structure, takes ten times what they give); and the time
// of code kprof does not count (the runtime) behind call.uncounted varies
// with what it does. The bytes the runtime charges for the concatenation
// and conversion kernels' results (cost, "Run-time charges"; about 12
// bytes, a tenth of their time) are not in their counts: string.concat
// and convert.string weigh them too. A table fits the kernels far better than it predicts
// programs: check it against CPU profiles (bench/costval).
package calibrate

import (
	"bufio"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/tools/go/callgraph"
	"golang.org/x/tools/go/callgraph/cha"
	"golang.org/x/tools/go/ssa"
	"golang.org/x/tools/go/ssa/ssautil"
	"gonum.org/v1/gonum/mat"

	"github.com/kprof/kprof/cost"
)

//go:embed kernels.go.txt
var kernelSrc []byte

// PriorWeight is λ, the weight of the pull towards the prior table
// against each kernel's relative error.
const PriorWeight = 0.05

// A Kernel is one micro-benchmark: its measured time per iteration and
// the instructions of each class one iteration runs.
type Kernel struct {
	Name      string
	PS        float64            // measured picoseconds per iteration
	Counts    map[string]float64 // instructions per iteration by class; "alloc.byte": bytes
	Predicted float64            // by the fitted table, ps per iteration
}

// Count returns the instructions of each class one iteration of each
// kernel runs, from the kernels' go/ssa form.
// Allocations are classified by the compiler's escape analysis, as kprof
// build does (cost.Escapes): the go command in PATH compiles the kernels
// with -m.
func Count() (map[string]map[string]float64, error) {
	dir, err := kernelsDir()
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filepath.Join(dir, "main.go"), kernelSrc, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	pkg, _, err := ssautil.BuildPackage(&types.Config{Importer: importer.Default()}, fset, types.NewPackage("main", "main"), []*ast.File{f}, ssa.BuilderMode(0))
	if err != nil {
		return nil, fmt.Errorf("kernels: %v", err)
	}
	esc, err := cost.BuildEscapes(dir, fset, []*ast.File{f})
	if err != nil {
		return nil, fmt.Errorf("kernels: %v", err)
	}
	cg := cha.CallGraph(pkg.Prog)
	out := make(map[string]map[string]float64)
	for name, mem := range pkg.Members {
		fn, ok := mem.(*ssa.Function)
		if !ok || !strings.HasPrefix(name, "k") || len(name) < 2 || name[1] < 'A' || name[1] > 'Z' {
			continue
		}
		counts := make(map[string]float64)
		blocks, err := loopBlocks(fn)
		if err != nil {
			return nil, err
		}
		for _, b := range blocks {
			if err := countBlock(b, cg, esc, counts, 0); err != nil {
				return nil, fmt.Errorf("%s: %v", name, err)
			}
		}
		out[name] = counts
	}
	if len(out) == 0 {
		return nil, errors.New("kernels: none found")
	}
	return out, nil
}

// loopBlocks returns the blocks of fn's one loop, checking that only its
// header branches: every block then runs once per iteration.
func loopBlocks(fn *ssa.Function) ([]*ssa.BasicBlock, error) {
	var header *ssa.BasicBlock
	var latches []*ssa.BasicBlock
	for _, b := range fn.Blocks {
		for _, s := range b.Succs {
			if s.Dominates(b) {
				if header != nil && header != s {
					return nil, fmt.Errorf("%s: more than one loop", fn.Name())
				}
				header = s
				latches = append(latches, b)
			}
		}
	}
	if header == nil {
		return nil, fmt.Errorf("%s: no loop", fn.Name())
	}
	in := map[*ssa.BasicBlock]bool{header: true}
	work := latches
	for len(work) > 0 {
		b := work[len(work)-1]
		work = work[:len(work)-1]
		if in[b] {
			continue
		}
		in[b] = true
		work = append(work, b.Preds...)
	}
	var blocks []*ssa.BasicBlock
	for _, b := range fn.Blocks {
		if !in[b] {
			continue
		}
		if b != header && len(b.Succs) > 1 {
			return nil, fmt.Errorf("%s: block %d (%s) branches inside the loop", fn.Name(), b.Index, b.Comment)
		}
		blocks = append(blocks, b)
	}
	return blocks, nil
}

// countBlock adds the classes of b's counted instructions to counts, and
// those of the functions it calls, which must run straight through.
func countBlock(b *ssa.BasicBlock, cg *callgraph.Graph, esc *cost.Escapes, counts map[string]float64, depth int) error {
	if depth > 4 {
		return errors.New("calls nested too deep")
	}
	for _, instr := range b.Instrs {
		switch instr.(type) {
		case *ssa.Phi, *ssa.DebugRef:
			continue
		}
		c, bytes := esc.Classify(instr)
		counts[c]++
		if bytes > 0 {
			counts["alloc.byte"] += float64(bytes)
		}
		call, ok := instr.(ssa.CallInstruction)
		if !ok {
			continue
		}
		if _, builtin := call.Common().Value.(*ssa.Builtin); builtin {
			continue
		}
		callee, err := calleeOf(call, b.Parent(), cg)
		if err != nil {
			return err
		}
		if callee == nil {
			continue // a function of another package: not counted here
		}
		for _, cb := range callee.Blocks {
			if len(cb.Succs) > 1 {
				return fmt.Errorf("callee %s branches", callee)
			}
			if err := countBlock(cb, cg, esc, counts, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// calleeOf returns the one counted function of package main that call may
// reach: synthetic wrappers (not counted by kprof) are followed to what
// they wrap.
func calleeOf(call ssa.CallInstruction, caller *ssa.Function, cg *callgraph.Graph) (*ssa.Function, error) {
	if f := call.Common().StaticCallee(); f != nil {
		return counted(f), nil
	}
	node := cg.Nodes[caller]
	var found *ssa.Function
	if node != nil {
		for _, e := range node.Out {
			if e.Site != call {
				continue
			}
			f := counted(e.Callee.Func)
			if f == nil || f == found {
				continue
			}
			if found != nil {
				return nil, fmt.Errorf("call %v may reach %s and %s", call, found, f)
			}
			found = f
		}
	}
	if found == nil {
		return nil, fmt.Errorf("call %v: no callee found", call)
	}
	return found, nil
}

// counted returns the function kprof counts for f: f, what a wrapper
// calls, or nil for a function of another package.
func counted(f *ssa.Function) *ssa.Function {
	for f != nil && f.Synthetic != "" {
		var next *ssa.Function
		for _, b := range f.Blocks {
			for _, instr := range b.Instrs {
				if c, ok := instr.(ssa.CallInstruction); ok {
					next = c.Common().StaticCallee()
				}
			}
		}
		f = next
	}
	if f == nil || f.Pkg == nil || f.Pkg.Pkg.Path() != "main" {
		return nil
	}
	return f
}

// kernelsDir returns a new temporary directory that holds the kernels as
// a main module.
func kernelsDir() (string, error) {
	dir, err := os.MkdirTemp("", "kprof-calibrate-")
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), kernelSrc, 0o666); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module kernels\n\ngo 1.22\n"), 0o666); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}

// Measure builds the kernels with the go command in PATH and runs them,
// rounds rounds each, returning picoseconds per iteration by kernel.
func Measure(ctx context.Context, rounds int) (map[string]float64, error) {
	dir, err := kernelsDir()
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "kernels")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, ".")
	build.Dir = dir
	build.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("building the kernels: %v\n%s", err, out)
	}
	run := exec.CommandContext(ctx, bin, strconv.Itoa(rounds))
	out, err := run.Output()
	if err != nil {
		return nil, fmt.Errorf("running the kernels: %v", err)
	}
	ps := make(map[string]float64)
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 2 {
			return nil, fmt.Errorf("kernels printed %q", sc.Text())
		}
		v, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			return nil, fmt.Errorf("kernels printed %q", sc.Text())
		}
		ps[f[0]] = v
	}
	return ps, nil
}

// A Fit is a fitted table and how well it fits the kernels.
type Fit struct {
	Table   *cost.Table
	Kernels []Kernel // by name
	Fitted  []string // classes some kernel runs, fitted
	Prior   []string // classes no kernel runs: the prior's weights
	// MedianError and MaxError are the median and largest relative error
	// |predicted − measured| / measured over the kernels.
	MedianError, MaxError float64
}

// FitTable fits a table named name to the kernels' times ps and counts
// (Count), pulled towards prior.
func FitTable(name string, ps map[string]float64, counts map[string]map[string]float64, prior *cost.Table) (*Fit, error) {
	var names []string
	for k := range counts {
		if ps[k] > 0 {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		return nil, errors.New("no kernel was measured")
	}
	used := make(map[string]bool)
	for _, k := range names {
		for c, n := range counts[k] {
			if n > 0 {
				used[c] = true
			}
		}
	}
	fit := &Fit{}
	for _, c := range cost.Classes {
		if used[c] {
			fit.Fitted = append(fit.Fitted, c)
		} else {
			fit.Prior = append(fit.Prior, c)
		}
	}
	// Rows: one per kernel (relative error), one per fitted class (the
	// pull towards the prior, relative too).
	nk, nc := len(names), len(fit.Fitted)
	a := mat.NewDense(nk+nc, nc, nil)
	b := mat.NewVecDense(nk+nc, nil)
	for i, k := range names {
		for j, c := range fit.Fitted {
			a.Set(i, j, counts[k][c]/ps[k])
		}
		b.SetVec(i, 1)
	}
	for j, c := range fit.Fitted {
		p := float64(prior.Class(c))
		a.Set(nk+j, j, PriorWeight/p)
		b.SetVec(nk+j, PriorWeight)
	}
	w, err := NNLS(a, b)
	if err != nil {
		return nil, err
	}
	t := &cost.Table{Name: name, Weights: make(map[string]int64)}
	for _, c := range fit.Prior {
		t.Weights[c] = prior.Class(c)
	}
	for j, c := range fit.Fitted {
		t.Weights[c] = max(1, int64(math.Round(w.AtVec(j))))
	}
	// append's growth is a heap allocation of the new capacity.
	t.Weights[cost.GrowClass], t.Weights[cost.GrowByteClass] = t.Class("alloc.heap"), t.Class("alloc.byte")
	var errs, perInstr []float64
	for _, k := range names {
		var pred, instrs float64
		for c, n := range counts[k] {
			pred += n * float64(t.Class(c))
			if c != "alloc.byte" {
				instrs += n
			}
		}
		fit.Kernels = append(fit.Kernels, Kernel{Name: k, PS: ps[k], Counts: counts[k], Predicted: pred})
		errs = append(errs, math.Abs(pred-ps[k])/ps[k])
		perInstr = append(perInstr, ps[k]/instrs)
	}
	sort.Float64s(errs)
	sort.Float64s(perInstr)
	fit.MedianError, fit.MaxError = median(errs), errs[len(errs)-1]
	// An average instruction: the median kernel's time per instruction.
	t.Scale = max(1, int64(math.Round(median(perInstr))))
	fit.Table = t
	return fit, nil
}

func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}
