package main

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"golang.org/x/tools/go/ssa"
	"golang.org/x/tools/go/ssa/interp"
	"golang.org/x/tools/go/ssa/ssautil"

	"github.com/kprof/kprof/cost"
	"github.com/kprof/kprof/profile"
	"github.com/kprof/kprof/rewrite"
)

// oracleTotal runs a single-file, import-free program under
// golang.org/x/tools/go/ssa/interp with tracing and counts, from the trace
// alone, the instructions of every SSA block it enters — the metric's
// definition applied to an execution, sharing nothing with the instrumenter
// (no landing points, no charges): an independent oracle for the exact
// total of the instrumented binary.
func oracleTotal(t *testing.T, file string) *oracleRun {
	return oracleLang(t, file, "")
}

// An oracleRun is what go/ssa/interp's trace of a program says: the total,
// each function's instructions and calls, and each calling context's
// (contexts are the counted functions on the stack from the outermost,
// joined by ";").
type oracleRun struct {
	total             int64
	per, calls        map[string]int64
	ctxSelf, ctxCalls map[string]int64
}

// oracleLang is oracleTotal for a program of language version lang ("" for
// the newest): go/ssa builds loop variables and the rest as that version
// defines them.
func oracleLang(t *testing.T, file, lang string) *oracleRun {
	t.Helper()
	return oracleWeighted(t, file, lang, nil)
}

// oracleWeighted is oracleLang with each instruction weighted by tbl
// (cost.Table.Weight; nil: 1): the oracle of the cost metric.
func oracleWeighted(t *testing.T, file, lang string, tbl *cost.Table) *oracleRun {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Imports) > 0 {
		t.Fatalf("%s: oracle programs import nothing", file)
	}
	pkg, _, err := ssautil.BuildPackage(&types.Config{Importer: importer.Default(), GoVersion: lang}, fset, types.NewPackage("main", "main"), []*ast.File{f}, ssa.InstantiateGenerics)
	if err != nil {
		t.Fatal(err)
	}
	if tbl != nil {
		// kprof build weighs allocations by the compiler's escape
		// analysis (cost.Escapes).
		esc, err := cost.BuildEscapes(filepath.Dir(file), fset, []*ast.File{f})
		if err != nil {
			t.Fatal(err)
		}
		tbl = tbl.WithEscapes(esc)
	}
	// Weights by function name; generic instances count as their origin.
	weights := map[string][]int64{}
	names := map[string]string{}
	for fn := range ssautil.AllFunctions(pkg.Prog) {
		origin := fn
		if fn.Origin() != nil {
			origin = fn.Origin() // generic bodies count once, with their own weights
		}
		if origin.Pkg != pkg || origin.Synthetic != "" && origin.Synthetic != "range-over-func yield" {
			continue
		}
		if slices.ContainsFunc(fn.TypeArgs(), parameterized) {
			continue // an instance a generic body calls (lessT[T] in sorted[T]): interp runs only its instances
		}
		var ws []int64
		for _, b := range origin.Blocks {
			n := int64(0)
			if b.Comment == "recover" {
				ws = append(ws, 0) // not counted (see package rewrite)
				continue
			}
			// The cost metric weighs the blocks that resume a
			// range-over-func loop the table's scale per instruction
			// (see rewrite.WeightBy).
			resume := strings.HasPrefix(b.Comment, "rangefunc.resume")
			for _, instr := range b.Instrs {
				switch instr.(type) {
				case *ssa.Phi, *ssa.DebugRef:
				default:
					switch {
					case tbl == nil:
						n++
					case resume:
						n += tbl.Scale
					default:
						n += tbl.Weight(instr)
					}
				}
			}
			ws = append(ws, n)
		}
		if len(origin.Blocks) != len(fn.Blocks) {
			t.Fatalf("%s: instance has %d blocks, its generic body %d", fn, len(fn.Blocks), len(origin.Blocks))
		}
		weights[fn.String()] = ws
		names[fn.String()] = rewrite.FuncName(origin)
	}

	// interp writes its trace to os.Stderr: read it from a pipe, one
	// interpreter at a time (parallel subtests).
	oracleMu.Lock()
	defer oracleMu.Unlock()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	var run *oracleRun
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		run = countTrace(r, weights, names)
	}()
	saved := os.Stderr
	os.Stderr = w
	code := interp.Interpret(pkg, interp.EnableTracing, types.SizesFor("gc", "amd64"), file, nil)
	os.Stderr = saved
	w.Close()
	wg.Wait()
	if code != 0 {
		t.Fatalf("%s: interpreter exit code %d", file, code)
	}
	return run
}

// oracleMu serializes the interpreter runs: each redirects os.Stderr.
var oracleMu sync.Mutex

// countTrace sums block weights along an interp trace. "Entering F at …"
// (F's frame is pushed), "Leaving F…" (popped: interp prints it from a
// deferred call, panics too) and ".N:" (block N of the function on top)
// are the lines that matter. The oracle programs start no goroutine: the
// trace is one goroutine's.
//
// Calling contexts are those of kprof's profile, which differ from
// interp's stack in two ways, both documented: a range-over-func loop body
// does not push itself, so what it calls is in its iterator's context
// (the body's own instructions are in a context of their own); and the
// deferred calls a panic runs are called from the frames the panic
// unwinds, which stay on the stack until the deferred call that recovers
// returns (as the Go runtime's stack shows them), where interp leaves
// each unwound frame before the deferred calls of the next one run.
func countTrace(r io.Reader, weights map[string][]int64, names map[string]string) *oracleRun {
	run := &oracleRun{per: map[string]int64{}, calls: map[string]int64{}, ctxSelf: map[string]int64{}, ctxCalls: map[string]int64{}}
	type frame struct {
		weights []int64 // nil: not counted
		name    string
		ctx     string // the counted functions down to this one
		base    string // the context of its callees
		dying   bool   // unwound by a panic that a deferred call may recover
		recover bool   // called recover
	}
	stack := []frame{{}}
	panicBase := -1 // while a panic unwinds: the depth of the stack when it began
	fnName := func(s string) string {
		if i := strings.Index(s, " at "); i >= 0 {
			s = s[:i]
		}
		if i := strings.Index(s, ", resuming "); i >= 0 {
			s = s[:i]
		}
		return strings.TrimSuffix(s, ".")
	}
	// live returns the index of the topmost frame that is not dying.
	live := func() int {
		i := len(stack) - 1
		for i > 0 && stack[i].dying {
			i--
		}
		return i
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := sc.Text()
		top := &stack[len(stack)-1]
		switch {
		case strings.HasPrefix(line, "Entering "):
			fn := fnName(strings.TrimPrefix(line, "Entering "))
			f := frame{weights: weights[fn], name: names[fn], ctx: top.base, base: top.base}
			if f.weights != nil {
				if f.ctx != "" {
					f.ctx += ";"
				}
				f.ctx += f.name
				if !isRangeBody(f.name) {
					f.base = f.ctx
				}
				run.calls[f.name]++
				run.ctxCalls[f.ctx]++
			}
			stack = append(stack, f)
		case strings.HasPrefix(line, "Panicking: "):
			if panicBase < 0 {
				panicBase = len(stack)
			}
		case strings.HasPrefix(line, "Leaving "):
			i := live()
			if panicBase >= 0 && i < panicBase {
				stack[i].dying = true // unwound: it stays below the deferred calls
				continue
			}
			recovered := stack[i].recover
			stack = stack[:i]
			if recovered && panicBase >= 0 {
				// The deferred call that recovered returns: the
				// frames the panic unwound are gone.
				stack = stack[:live()+1]
				panicBase = -1
			}
		case strings.HasSuffix(line, "= recover()"):
			top.recover = true
		case strings.HasPrefix(line, ".") && strings.HasSuffix(line, ":"):
			n, err := strconv.Atoi(line[1 : len(line)-1])
			if err == nil && top.weights != nil && n < len(top.weights) {
				w := top.weights[n]
				run.total += w
				run.per[top.name] += w
				run.ctxSelf[top.ctx] += w
			}
		}
	}
	return run
}

// TestExactAgainstOracle builds every testdata program with kprof (only
// package main instrumented, as the oracle sees only it), runs it in exact
// mode and compares the profile's total, each function's instructions and
// calls with the oracle's; and the total again with the default options.
func TestExactAgainstOracle(t *testing.T) {
	heavy(t)
	kprofBin := buildKprof(t)
	dirs, _ := filepath.Glob("../../testdata/progs/*")
	if len(dirs) < 10 {
		t.Fatalf("want at least 10 oracle programs, have %d", len(dirs))
	}
	for i, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			parallelAfter(t, i)
			checkOracle(t, kprofBin, dir, "")
		})
	}
}

// TestOldLanguageVersions builds testdata programs as modules that declare
// old language versions (go.mod's go line sets the compiler's -lang): what
// kprof inserts must compile under each (no generics before go1.18), exact
// mode must agree with the oracle of that version, and the program must
// print what its plain build prints (below go1.22 closures share a loop's
// variable).
func TestOldLanguageVersions(t *testing.T) {
	heavy(t)
	kprofBin := buildKprof(t)
	for _, tc := range []struct {
		lang  string
		progs []string
	}{
		{"1.12", []string{"closures", "fig4", "gotos", "methods", "loopvars"}},
		{"1.16", []string{"folds", "inlining", "lazy", "logic", "merges", "recursion", "selects", "selfloop", "strs", "switches"}},
		{"1.17", []string{"closures", "methods", "recursion"}},
		{"1.21", []string{"loopvars", "closures"}},
	} {
		for i, prog := range tc.progs {
			t.Run("go"+tc.lang+"/"+prog, func(t *testing.T) {
				parallelAfter(t, i)
				dir := t.TempDir()
				src, err := os.ReadFile(filepath.Join("../../testdata/progs", prog, "main.go"))
				if err != nil {
					t.Fatal(err)
				}
				mod := fmt.Sprintf("module example.com/%s\n\ngo %s\n", prog, tc.lang)
				if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o666); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "main.go"), src, 0o666); err != nil {
					t.Fatal(err)
				}
				dir = oracleSized(t, dir) // the program checkOracle builds
				want, err := runCmd(dir, nil, "go", "run", ".")
				if err != nil {
					t.Fatalf("go run: %v\n%s", err, want)
				}
				bin := checkOracle(t, kprofBin, dir, "go"+tc.lang)
				for _, mode := range []string{"off", "sample", "exact"} {
					env := []string{"KPROF_MODE=" + mode, "KPROF_OUT=" + filepath.Join(t.TempDir(), "p.kprof")}
					if got, err := runCmd("", env, bin); err != nil || got != want {
						t.Errorf("%s mode: %v\n%s\nwant (plain build)\n%s", mode, err, got, want)
					}
				}
			})
		}
	}
}

// checkOracle builds the program in dir with kprof (only package main
// instrumented, as the oracle sees only it), with the default options and
// with -smallleaf 0 (every function checks at entry), runs each in exact
// mode and compares the profile's total, each function's instructions and
// calls with the oracle's for language version lang. It returns the
// binary built with the default options.
func checkOracle(t *testing.T, kprofBin, dir, lang string) string {
	t.Helper()
	dir = oracleSized(t, dir)
	want := oracleLang(t, filepath.Join(dir, "main.go"), lang)
	var bin string
	for _, flags := range [][]string{{"-pkgs", "main", "-smallleaf", "0"}, {"-pkgs", "main"}} {
		bin = kprofBuild(t, kprofBin, dir, flags...)
		compareOracle(t, runProfile(t, bin, "exact"), fmt.Sprint(flags), want)
	}
	return bin
}

// isRangeBody reports whether a function's name is a range-over-func loop
// body's (main.f-range1, main.f-range1-range2), not that of a function
// literal inside one (main.f-range1.1).
func isRangeBody(name string) bool { return rangeBodyName.MatchString(name) }

var rangeBodyName = regexp.MustCompile(`-range[0-9]+$`)

// rangeBody reports whether the context ctx ends in a range-over-func loop
// body, whose "calls" (one per iteration, from the iterator) kprof does not
// count.
func rangeBody(ctx string) bool {
	return isRangeBody(ctx[strings.LastIndex(ctx, ";")+1:])
}

// oracleRounds is how a program sized for a native run (testdata/progs/fig4,
// the README's example) tells the oracle, which interprets it a thousand
// times slower, to run fewer rounds.
var oracleRounds = regexp.MustCompile(`(?m)^(const \w+ = )\d+( // the oracle runs (\d+))$`)

// oracleSized returns dir, or, if its program declares fewer rounds for the
// oracle (oracleRounds), a copy of it (main.go and go.mod) that runs them.
func oracleSized(t *testing.T, dir string) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(dir, "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	m := oracleRounds.FindSubmatch(src)
	if m == nil {
		return dir
	}
	small := t.TempDir()
	mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		mod = []byte("module example.com/" + filepath.Base(dir) + "\n\ngo 1.26\n")
	}
	src = oracleRounds.ReplaceAll(src, []byte("${1}${3}${2}"))
	if err := os.WriteFile(filepath.Join(small, "go.mod"), mod, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(small, "main.go"), src, 0o666); err != nil {
		t.Fatal(err)
	}
	return small
}

// compareOracle compares an exact profile with the oracle's total, each
// function's instructions and calls, and each calling context's. Small
// leaves, functions the compiler inlines and functions that push lazily
// included, every function samples in its own name and context and counts
// its calls.
func compareOracle(t *testing.T, prof *profile.Profile, build string, run *oracleRun) {
	t.Helper()
	want, per, calls := run.total, run.per, run.calls
	if prof.TotalInstructions != want {
		t.Errorf("%s: exact total %d, oracle %d (δ %+d)", build, prof.TotalInstructions, want, prof.TotalInstructions-want)
	}
	// Each calling context's instructions and calls, exactly.
	ctxSelf, ctxCalls := map[string]int64{}, map[string]int64{}
	prof.Walk(func(stack []profile.Func, n *profile.Node) {
		names := make([]string, len(stack))
		for i, f := range stack {
			names[i] = f.Name
		}
		ctx := strings.Join(names, ";")
		ctxSelf[ctx] += n.Instructions
		ctxCalls[ctx] += n.Calls
	})
	for _, m := range []struct {
		what      string
		got, want map[string]int64
	}{{"instructions", ctxSelf, run.ctxSelf}, {"calls", ctxCalls, run.ctxCalls}} {
		for ctx, n := range m.want {
			if m.got[ctx] != n && !(m.what == "calls" && rangeBody(ctx)) {
				t.Errorf("%s: context %s: kprof %d %s, oracle %d", build, ctx, m.got[ctx], m.what, n)
			}
		}
		for ctx, n := range m.got {
			if _, ok := m.want[ctx]; !ok && n != 0 {
				t.Errorf("%s: context %s: kprof %d %s, oracle none", build, ctx, n, m.what)
			}
		}
	}
	// Each function's own instructions, exactly.
	got := map[string]int64{}
	for _, fs := range prof.Flat() {
		got[fs.Func.Name] = fs.Self
	}
	for name, n := range per {
		if got[name] != n {
			t.Errorf("%s: %s: kprof %d instructions, oracle %d", build, name, got[name], n)
		}
	}
	for name, n := range got {
		if _, ok := per[name]; !ok && n != 0 {
			t.Errorf("%s: %s: kprof %d instructions, oracle none", build, name, n)
		}
	}
	// Calls (range-over-func bodies apart, which are not calls).
	gotCalls := map[string]int64{}
	prof.Walk(func(stack []profile.Func, n *profile.Node) {
		gotCalls[stack[len(stack)-1].Name] += n.Calls
	})
	var allCalls int64
	for name, n := range calls {
		if !isRangeBody(name) && gotCalls[name] != n {
			t.Errorf("%s: %s: %d calls, oracle %d", build, name, gotCalls[name], n)
		}
		allCalls += n
	}
	// Exact mode samples where the calling context changes: at
	// each entry and at each return or panic, not at loop headers
	// or MaxPath checks (counter.SL), which would take one per
	// iteration.
	if max := 2*allCalls + 1; prof.TotalSamples > max {
		t.Errorf("%s: exact mode took %d samples for %d calls: more than %d", build, prof.TotalSamples, allCalls, max)
	}
}

// TestExactPathsRangeFunc runs a program whose range-over-func body samples
// where another callee stood at the previous sample, in exact mode with
// KPROF_VERIFY_PATHS (runProfile sets it: the agent panics if the stack it
// was told is unchanged changed), and checks that the body's instructions
// are in parse's context (under the iterator), not under strings.Index.
func TestExactPathsRangeFunc(t *testing.T) {
	kprofBin := buildKprof(t)
	bin := kprofBuild(t, kprofBin, "../../testdata/rangepaths")
	p := runProfile(t, bin, "exact")
	var found bool
	var walk func(n *profile.Node, path []string)
	walk = func(n *profile.Node, path []string) {
		for _, c := range n.Children {
			q := append(path, c.Func.Name)
			if c.Func.Name == "main.parse-range1" {
				found = true
				if !slices.Contains(path, "main.parse") || slices.Contains(path, "strings.Index") {
					t.Errorf("range body in context %v", q)
				}
			}
			walk(c, q)
		}
	}
	walk(p.Root, []string{"(root)"})
	if !found {
		t.Error("no context for main.parse-range1")
	}
}

// TestRangeReturnDeep builds testdata/rangereturn, whose returns from
// range-over-func loop bodies happen 70 frames down (beyond the reified
// stack's first buffer) while the iterator runs on after its yield
// returned false, and runs it in sample mode at granularities around where
// such a return's sample grew the buffer only up to the function and left
// the iterators' entries empty (the agent then crashed on a nil function):
// it must print what go run prints, and its profiles must parse. Its
// exact profile, taken with KPROF_VERIFY_PATHS, must equal the oracle's
// context for context (iterators more than 64 frames down, where the
// buffer first grows, once reported a changed entry).
func TestRangeReturnDeep(t *testing.T) {
	kprofBin := buildKprof(t)
	dir := "../../testdata/rangereturn"
	want, err := runCmd(dir, nil, "go", "run", ".")
	if err != nil {
		t.Fatalf("go run: %v\n%s", err, want)
	}
	for _, flags := range [][]string{{"-pkgs", "main", "-smallleaf", "0"}, nil} {
		bin := kprofBuild(t, kprofBin, dir, flags...)
		for _, gran := range []string{"490", "493", "494", "500", "1000"} {
			out := filepath.Join(t.TempDir(), "p.kprof")
			got, err := runCmd("", []string{"KPROF_GRAN=" + gran, "KPROF_JITTER=0", "KPROF_OUT=" + out}, bin)
			if err != nil || got != want {
				t.Fatalf("%v at KPROF_GRAN=%s: %v\n%s\nwant\n%s", flags, gran, err, got, want)
			}
			if _, err := profile.ParseFile(out); err != nil {
				t.Errorf("%v at KPROF_GRAN=%s: %v", flags, gran, err)
			}
		}
	}
	checkOracle(t, kprofBin, dir, "")
}

// TestRecoverPops runs testdata/recoverpops, whose panics unwind frames
// that pop by count (counter.Pop) before a deferred call recovers them, in
// exact mode, and checks that the stack depth is whole again afterwards:
// main.after, called after each recovery, has main.main as its only parent,
// and main.mid only main.safe.
func TestRecoverPops(t *testing.T) {
	kprofBin := buildKprof(t)
	bin := kprofBuild(t, kprofBin, "../../testdata/recoverpops")
	p := runProfile(t, bin, "exact")
	want := map[string][]string{
		"main.after": {"(root)", "main.main"},
		"main.mid":   {"(root)", "main.main", "main.safe"},
	}
	seen := map[string]int64{}
	var walk func(n *profile.Node, path []string)
	walk = func(n *profile.Node, path []string) {
		for _, c := range n.Children {
			if w, ok := want[c.Func.Name]; ok {
				seen[c.Func.Name] += c.Calls
				if !slices.Equal(path, w) {
					t.Errorf("%s in context %v, want %v", c.Func.Name, path, w)
				}
			}
			walk(c, append(slices.Clip(path), c.Func.Name))
		}
	}
	walk(p.Root, []string{"(root)"})
	for name := range want {
		if seen[name] != 100 {
			t.Errorf("%s: %d calls, want 100", name, seen[name])
		}
	}
}

// parameterized reports whether t mentions a type parameter.
func parameterized(t types.Type) bool {
	switch t := types.Unalias(t).(type) {
	case *types.TypeParam:
		return true
	case *types.Pointer:
		return parameterized(t.Elem())
	case *types.Slice:
		return parameterized(t.Elem())
	case *types.Array:
		return parameterized(t.Elem())
	case *types.Chan:
		return parameterized(t.Elem())
	case *types.Map:
		return parameterized(t.Key()) || parameterized(t.Elem())
	case *types.Named:
		for i := range t.TypeArgs().Len() {
			if parameterized(t.TypeArgs().At(i)) {
				return true
			}
		}
	case *types.Signature:
		for _, tu := range []*types.Tuple{t.Params(), t.Results()} {
			for i := range tu.Len() {
				if parameterized(tu.At(i).Type()) {
					return true
				}
			}
		}
	case *types.Struct:
		for i := range t.NumFields() {
			if parameterized(t.Field(i).Type()) {
				return true
			}
		}
	}
	return false
}
