package rewrite

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"go/version"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/kprof/kprof/cost"
	"github.com/kprof/kprof/rewrite/internal/edit"
	"golang.org/x/tools/go/ssa"
	"golang.org/x/tools/go/ssa/ssautil"
)

// CounterPath is the import path of the package instrumented code calls.
const CounterPath = "github.com/kprof/kprof/counter"

// Options control the instrumentation. They are part of the build cache key.
type Options struct {
	// MaxPath is the largest number of instructions any path may run
	// without a granularity check (paper §5.2). Default 50.
	MaxPath int
	// SmallLeaf: loop-free leaf functions whose longest path has at most
	// this many instructions get no check, so that they stay inlinable.
	// Default 50 (MaxPath).
	SmallLeaf int
	// Inert reports whether the package with this import path reaches no
	// instrumented code but through the function and interface values
	// passed to it (the runtime and its dependencies). A function whose
	// only calls go to such packages, passing no such value, cannot be
	// sampled below itself: it is a leaf (paper §5.1), and does not push.
	// nil: every call may reach instrumented code. Not part of the build's
	// options: it follows from the toolchain.
	Inert func(path string) bool `json:"-"`
	// Quiet reports whether the function named name (types.Func.FullName)
	// of the package with import path pkg, another package, is quiet, and
	// its longest path: the quiet facts (Output.Quiet) kprof build wrote
	// when it compiled that package (nil: none is known). A call to a quiet
	// function is no call for its caller (quietFuncs). Not part of the
	// build's options: it follows from the dependencies' source.
	Quiet func(pkg, name string) (int64, bool) `json:"-"`
	// ExactPops: every function that pushes keeps the depth at its entry
	// and restores it on the way out, instead of popping one entry (see
	// "Pops" in the package documentation). Needed where code that is not
	// instrumented may recover a panic and return normally: kprof build
	// -pkgs.
	ExactPops bool
	// Cost, if set, is the table of the cost metric (kprof build -metric
	// cost): blocks charge the weights of their instructions in it
	// instead of their number. Checks, small leaves and quiet functions
	// are decided on instruction counts all the same (FuncPlan.Counts).
	Cost *cost.Table
	// CheckPlans: every function's plan is checked against the invariants
	// of check.go as it is made, and Package fails on the first one a plan
	// breaks. The tests set it; the -toolexec driver sets it when the
	// environment has KPROF_CHECKPLANS=1 (not part of the build's
	// options: it changes no output, only what is verified).
	CheckPlans bool `json:"-"`
}

// DefaultOptions are the options kprof build uses unless told otherwise.
var DefaultOptions = Options{MaxPath: 50, SmallLeaf: 50}

// Input is a type-checked package with its source.
type Input struct {
	Fset  *token.FileSet
	Files []*ast.File
	Srcs  [][]byte // source of each file
	Names []string // file name to report in positions (line directives)
	Path  string   // import path
	Pkg   *types.Package
	Info  *types.Info
	// Escapes is the compiler's escape analysis of the package
	// (cost.ParseEscapes), if known: under a cost table, the allocations
	// it keeps on the stack weigh as such.
	Escapes *cost.Escapes
}

// Output is the instrumented package.
type Output struct {
	// Files holds the rewritten source of each input file, or nil for a
	// file that needs no change.
	Files [][]byte
	// Tables, if not nil, is the source of one more file of the package:
	// the tables of counted functions and of dispatch values that the
	// rewritten files refer to. It must be compiled before the package's
	// files (first on the compiler's command line): a package's variables
	// initialize in the order they are declared unless one depends on
	// another, and a function that refers to a table declared after some
	// variable would delay every variable whose initializer calls it past
	// that one. Declared first, the tables (constant data) delay nothing.
	Tables []byte
	Plans  []*FuncPlan
	// Approx lists every place where a weight could only be charged
	// approximately: the residual inexactness of the instrumentation.
	Approx []string
	// Quiet holds the package's quiet functions (quietFuncs) by full name
	// (types.Func.FullName), with their longest paths: the facts its
	// importers plan their calls with (Options.Quiet).
	Quiet map[string]int64
}

// NewInfo returns a types.Info with every map go/ssa needs.
func NewInfo() *types.Info {
	return &types.Info{
		Types:        make(map[ast.Expr]types.TypeAndValue),
		Defs:         make(map[*ast.Ident]types.Object),
		Uses:         make(map[*ast.Ident]types.Object),
		Implicits:    make(map[ast.Node]types.Object),
		Instances:    make(map[*ast.Ident]types.Instance),
		Scopes:       make(map[ast.Node]*types.Scope),
		Selections:   make(map[*ast.SelectorExpr]*types.Selection),
		FileVersions: make(map[*ast.File]string),
	}
}

// BuildSSA builds the go/ssa form of in's package, the source of weights.
func BuildSSA(in *Input) *ssa.Package {
	prog := ssa.NewProgram(in.Fset, ssa.BuilderMode(0))
	created := make(map[*types.Package]bool)
	var create func(p *types.Package)
	create = func(p *types.Package) {
		if created[p] {
			return
		}
		created[p] = true
		prog.CreatePackage(p, nil, nil, true)
		for _, q := range p.Imports() {
			create(q)
		}
	}
	for _, q := range in.Pkg.Imports() {
		create(q)
	}
	spkg := prog.CreatePackage(in.Pkg, in.Files, in.Info, false)
	spkg.Build()
	return spkg
}

// skipPragmas are the directives whose functions must not be instrumented.
var skipPragmas = []string{"//go:nosplit", "//go:norace", "//go:systemstack", "//go:nowritebarrier", "//go:nowritebarrierrec", "//go:yeswritebarrierrec", "//go:uintptrkeepalive"}

func hasSkipPragma(doc *ast.CommentGroup) bool {
	if doc == nil {
		return false
	}
	for _, c := range doc.List {
		for _, p := range skipPragmas {
			if c.Text == p || strings.HasPrefix(c.Text, p+" ") {
				return true
			}
		}
	}
	return false
}

// Package instruments one package.
func Package(in *Input, opts Options) (*Output, error) {
	if opts.MaxPath == 0 {
		opts.MaxPath = DefaultOptions.MaxPath
	}
	if opts.Cost != nil && in.Escapes != nil {
		opts.Cost = opts.Cost.WithEscapes(in.Escapes)
	}
	spkg, consts := buildSSA(in)
	fileOf := make(map[*token.File]int)
	for i, f := range in.Files {
		fileOf[in.Fset.File(f.Pos())] = i
	}

	// The functions to instrument, grouped by file, in source order.
	byFile := make([][]*ssa.Function, len(in.Files))
	skipped := make(map[ast.Node]bool)
	for _, f := range in.Files {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && hasSkipPragma(fd.Doc) {
				skipped[fd] = true
			}
		}
	}
	for fn := range ssautil.AllFunctions(spkg.Prog) {
		if fn.Pkg != spkg || fn.Blocks == nil || fn.Syntax() == nil {
			continue
		}
		if fn.Synthetic != "" && fn.Synthetic != rangeYield {
			continue
		}
		if fn.Origin() != nil { // an instance; the generic body is counted once
			continue
		}
		if top := topLevel(fn); skipped[top.Syntax()] || strings.HasPrefix(top.Name(), "_Cfunc_") || strings.HasPrefix(top.Name(), "_cgo") {
			continue
		}
		i, ok := fileOf[in.Fset.File(fn.Syntax().Pos())]
		if !ok {
			continue
		}
		if base := path.Base(in.Names[i]); strings.HasPrefix(base, "_cgo_") {
			continue
		}
		byFile[i] = append(byFile[i], fn)
	}

	facts := packageFacts(byFile, opts)
	facts.consts = consts
	out := &Output{Files: make([][]byte, len(in.Files)), Quiet: make(map[string]int64)}
	for fn, n := range facts.quiet {
		if obj, ok := fn.Object().(*types.Func); ok && obj.Pkg() == in.Pkg {
			out.Quiet[obj.FullName()] = n
		}
	}
	var tables strings.Builder
	for i, fns := range byFile {
		if len(fns) == 0 {
			continue
		}
		sort.Slice(fns, func(a, b int) bool {
			if fns[a].Pos() != fns[b].Pos() {
				return fns[a].Pos() < fns[b].Pos()
			}
			return fns[a].Syntax().Pos() < fns[b].Syntax().Pos()
		})
		src, tabs, plans, approx := instrumentFile(in, i, fns, opts, facts)
		for _, p := range plans {
			if p.broken != nil {
				return nil, fmt.Errorf("kprof's plan of %s (%s) breaks an invariant: %v", p.Name, in.Fset.Position(p.Fn.Pos()), p.broken)
			}
		}
		out.Files[i] = src
		out.Plans = append(out.Plans, plans...)
		out.Approx = append(out.Approx, approx...)
		tables.WriteString(tabs)
	}
	if tables.Len() > 0 {
		out.Tables = fmt.Appendf(nil, "// Code generated by kprof. DO NOT EDIT.\n\npackage %s\n\nimport %s %q\n%s", in.Pkg.Name(), counterAlias, CounterPath, tables.String())
	}
	return out, nil
}

// quietFuncs returns the package's quiet functions with their longest
// paths: small leaves (loop-free, longest path within SmallLeaf) that
// cannot panic and call nothing but inert functions that return promptly
// (promptCall; math/bits: nlz in math/big, PCG's next in math/rand/v2). A
// call to one is no call for the caller's checks and flushes: the callee
// cannot stop the caller, and it samples only what was charged to the
// count (kprofFold moves its charges and its check to the caller's
// accumulator where the compiler inlines it). It is a call for the
// caller's leafness: the callee samples above its caller (callsOut). A
// function that calls a quiet one is not quiet: it pushes, and its own
// checks, in the count alone, would miss what its caller accumulated —
// the caller's checks, which see it, would always fire first, and the
// function would never be sampled (cmp.Less, which calls isNaN; jess's
// litValue). The map also holds the quiet functions of other packages
// that the package calls (addQuietCallees).
func quietFuncs(byFile [][]*ssa.Function, opts Options) map[*ssa.Function]int64 {
	quiet := make(map[*ssa.Function]int64)
	addQuietCallees(quiet, byFile, opts)
	for _, fns := range byFile {
		for _, fn := range fns {
			if fn.Synthetic != "" || len(loopHeaders(fn)) > 0 {
				continue
			}
			_, charged := weights(fn)
			if n, ok := quietPath(fn, charged, opts); ok {
				quiet[fn] = n
			}
		}
	}
	return quiet
}

// quietPath returns the longest path of fn and whether fn is quiet: it
// cannot panic, calls nothing but inert functions that return promptly,
// and its longest path is within SmallLeaf.
func quietPath(fn *ssa.Function, charged []int64, opts Options) (int64, bool) {
	for _, b := range fn.Blocks {
		if panics(b) || callsBut(b, func(c *ssa.CallCommon) bool { return promptCall(c, opts.Inert) }) {
			return 0, false
		}
	}
	n := longestPath(fn, charged)
	return n, n <= int64(opts.SmallLeaf)
}

// withQuietCallees returns fn's block weights with, in each block, the
// longest paths of the quiet functions it calls: what runs there without a
// check of fn's own.
func withQuietCallees(fn *ssa.Function, charged []int64, quiet map[*ssa.Function]int64) []int64 {
	w := append([]int64(nil), charged...)
	for _, b := range fn.Blocks {
		for _, instr := range b.Instrs {
			if c, ok := instr.(*ssa.Call); ok {
				if n := quietCall(&c.Call, quiet); n > 0 {
					w[b.Index] += n
				}
			}
		}
	}
	return w
}

// addQuietCallees adds to quiet the functions of other packages that
// byFile's functions call and the other packages' facts say are quiet
// (Options.Quiet).
func addQuietCallees(quiet map[*ssa.Function]int64, byFile [][]*ssa.Function, opts Options) {
	if opts.Quiet == nil {
		return
	}
	for _, fns := range byFile {
		for _, fn := range fns {
			for _, b := range fn.Blocks {
				for _, instr := range b.Instrs {
					c, ok := instr.(*ssa.Call)
					if !ok {
						continue
					}
					callee := staticFunc(&c.Call)
					if _, done := quiet[callee]; callee == nil || done || callee.Pkg == fn.Pkg {
						continue
					}
					if obj, ok := callee.Object().(*types.Func); ok && obj.Pkg() != nil {
						if n, ok := opts.Quiet(obj.Pkg().Path(), obj.FullName()); ok {
							quiet[callee] = n
						}
					}
				}
			}
		}
	}
}

// funcFacts is what planning a function needs to know about the other
// functions of its package.
type funcFacts struct {
	quiet map[*ssa.Function]int64 // quietFuncs
	// checked are the functions that check on entry (every instrumented
	// function but small leaves and those that may check only where they
	// push, mayEnterLate): a call to one needs no check before it (see
	// planFunc).
	checked map[*ssa.Function]bool
	// consts holds the positions of the package's tests of constants
	// (buildSSA).
	consts map[*ssa.If]token.Pos
}

// packageFacts returns the facts of the functions to instrument.
func packageFacts(byFile [][]*ssa.Function, opts Options) *funcFacts {
	f := &funcFacts{quiet: quietFuncs(byFile, opts), checked: make(map[*ssa.Function]bool)}
	for _, fns := range byFile {
		for _, fn := range fns {
			if fn.Synthetic != "" {
				continue
			}
			_, charged := weights(fn)
			leaf := isLeaf(fn, opts.Inert)
			out := func(b *ssa.BasicBlock) bool { return callsOut(b, opts.Inert) }
			if _, small := smallLeaf(fn, leaf, charged, &opts); !small && (leaf || !mayEnterLate(fn, out, &opts)) {
				f.checked[fn] = true
			}
		}
	}
	return f
}

func topLevel(fn *ssa.Function) *ssa.Function {
	for fn.Parent() != nil {
		fn = fn.Parent()
	}
	return fn
}

// instrumentFile returns the rewrite of the package's file i, the
// declarations of its tables (for Output.Tables), its functions' plans and
// the places it charges approximately.
func instrumentFile(in *Input, i int, fns []*ssa.Function, opts Options, facts *funcFacts) ([]byte, string, []*FuncPlan, []string) {
	file := in.Files[i]
	labels := make(map[ast.Stmt]string)
	ast.Inspect(file, func(n ast.Node) bool {
		if l, ok := n.(*ast.LabeledStmt); ok {
			labels[l.Stmt] = l.Label.Name
			labels[l] = l.Label.Name
		}
		return true
	})
	em := &fileEmitter{
		Buffer:     edit.NewBuffer(in.Fset.File(file.Pos()), in.Srcs[i], in.Names[i]),
		fset:       in.Fset,
		file:       file,
		info:       in.Info,
		pkg:        in.Pkg,
		labels:     labels,
		table:      fmt.Sprintf("_kprofF%d", i),
		valueTable: fmt.Sprintf("_kprofT%d", i),
		renamed:    make(map[*ast.FuncType]bool),
		generics:   allowsGenerics(in.Info.FileVersions[file]),
	}
	ids := make(map[*ssa.Function]int)
	var plans []*FuncPlan
	var approx []string
	for _, fn := range fns {
		var body *ast.BlockStmt
		switch syn := fn.Syntax().(type) {
		case *ast.FuncDecl:
			body = syn.Body
		case *ast.FuncLit:
			body = syn.Body
		case *ast.RangeStmt:
			body = syn.Body
		}
		if body == nil {
			continue
		}
		p := planFunc(file, in.Info, labels, fn, body, &opts, facts)
		p.Name = FuncName(fn)
		p.Line = in.Fset.Position(fn.Pos()).Line
		ids[fn] = len(em.entries)
		em.entries = append(em.entries, fmt.Sprintf("{%s, %s, %d}", strconv.Quote(p.Name), strconv.Quote(in.Path+"/"+path.Base(in.Names[i])), p.Line))
		plans = append(plans, p)
		approx = append(approx, p.Approx...)
	}
	for _, p := range plans {
		em.emitFunc(p, ids[p.Fn])
	}
	approx = append(approx, em.approx...)
	if len(em.entries) == 0 {
		return nil, "", plans, approx
	}
	// The import goes right after the package clause, on its line.
	em.Insert(file.Name.End(), rankStmt, fmt.Sprintf("; import %s %q", counterAlias, CounterPath))
	src := em.Bytes("")
	// The tables go to Output.Tables; the import stays in use without
	// them.
	src = fmt.Appendf(src, "\n\nvar _ *%s.Func\n", counterAlias)
	var entries strings.Builder
	for _, e := range em.entries {
		fmt.Fprintf(&entries, "\t%s,\n", e)
	}
	lit := fmt.Sprintf("[...]%s.Func{\n%s}", counterAlias, entries.String())
	var tabs strings.Builder
	if fipsModule(in.Path) {
		// The linker hashes the FIPS 140 module's initialized data and
		// crypto/internal/fips140/check compares at startup, after the
		// init of the packages it imports. The compiler initializes a
		// table of strings there partly statically and partly at init
		// (no static addresses in the module): that init would change
		// hashed data. From a function call the whole table is set at
		// init, in zeroed memory the hash leaves out.
		fmt.Fprintf(&tabs, "\nvar %s = %sInit()\n\n//go:noinline\nfunc %sInit() [%d]%s.Func {\n\treturn %s\n}\n",
			em.table, em.table, em.table, len(em.entries), counterAlias, lit)
	} else {
		fmt.Fprintf(&tabs, "\nvar %s = %s\n", em.table, lit)
	}
	for _, t := range em.tables {
		fmt.Fprintf(&tabs, "\n%s\n", t)
	}
	return src, tabs.String(), plans, approx
}

// fipsModule reports whether the package path is one of the FIPS 140
// module's, crypto/internal/fips140/... (the compiler's and linker's
// test).
func fipsModule(path string) bool {
	return path == "crypto/internal/fips140" || strings.HasPrefix(path, "crypto/internal/fips140/")
}

// FuncName names fn the way the Go runtime and go tool pprof do:
// "pkg.F", "pkg.(*T).M", "pkg.T.M", "pkg.F.func1", "pkg.F.func1.2",
// "pkg.G[...]", "pkg.init.0".
func FuncName(fn *ssa.Function) string {
	if parent := fn.Parent(); parent != nil {
		// Closures are numbered in order, range-over-func bodies apart
		// (the compiler names them F-range1).
		idx, ranges := 0, 0
		for _, a := range parent.AnonFuncs {
			if a.Synthetic != "" {
				ranges++
			} else {
				idx++
			}
			if a == fn {
				break
			}
		}
		pn := FuncName(parent)
		if fn.Synthetic != "" {
			return fmt.Sprintf("%s-range%d", pn, ranges)
		}
		if parent.Parent() != nil {
			return fmt.Sprintf("%s.%d", pn, idx)
		}
		if parent.Synthetic == "package initializer" {
			return fmt.Sprintf("%s.func%d", pn, idx)
		}
		return fmt.Sprintf("%s.func%d", pn, idx)
	}
	pkg := ""
	if fn.Pkg != nil {
		pkg = fn.Pkg.Pkg.Path()
	}
	name := fn.Name()
	if strings.HasPrefix(name, "init#") {
		n, _ := strconv.Atoi(strings.TrimPrefix(name, "init#"))
		return fmt.Sprintf("%s.init.%d", pkg, n-1)
	}
	if fn.TypeParams().Len() > 0 {
		name += "[...]"
	}
	if recv := fn.Signature.Recv(); recv != nil {
		t := recv.Type()
		ptr := false
		if p, ok := t.(*types.Pointer); ok {
			t, ptr = p.Elem(), true
		}
		tn := ""
		if n, ok := t.(*types.Named); ok {
			tn = n.Obj().Name()
			if n.TypeParams().Len() > 0 || n.TypeArgs().Len() > 0 {
				tn += "[...]"
			}
		}
		if ptr {
			return fmt.Sprintf("%s.(*%s).%s", pkg, tn, name)
		}
		return fmt.Sprintf("%s.%s.%s", pkg, tn, name)
	}
	return pkg + "." + name
}

// allowsGenerics reports whether a file of language version v (its
// package's -lang, raised for the file by a //go:build go1.N line; "" when
// the type checker was given none) may instantiate generic code: what
// kprof inserts must compile under the file's own version, which kprof
// never changes.
func allowsGenerics(v string) bool {
	return v == "" || version.Compare(v, "go1.18") >= 0
}
