package rewrite

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// The compiler's inliner charges every call in a function against a budget
// of 80 nodes; a call to a function that is not inlined costs 57. The
// checks and charges kprof inserts would tip many small functions over the
// budget, and a function that is no longer inlined changes the program
// (escape analysis then moves what it returns to the heap: tests that
// count allocations fail). Coverage instrumentation has the same problem,
// which the compiler solves by treating coverage counter updates as free
// (isAtomicCoverageCounterUpdate in inl.go). kprof builds a compiler whose
// inliner treats calls into package counter the same way; the generated
// code is that of the stock compiler.

// inlinerPatches are the edits to cmd/compile/internal/inline/inl.go: the
// inliner's cost visitor skips what kprof inserted — calls into package
// counter, the ifs around its checks, the stack-depth bookkeeping — and
// costs only the user's code inside (case values, return results).
var inlinerPatches = []struct{ old, new string }{
	{
		old: "\tres := InlineCall(callerfn, n, fn, inlIndex)\n\n\tif res == nil {\n\t\tbase.FatalfAt(n.Pos(), \"inlining call to %v failed\", fn)\n\t}\n",
		new: "\tres := InlineCall(callerfn, n, fn, inlIndex)\n\n\tif res == nil {\n\t\tbase.FatalfAt(n.Pos(), \"inlining call to %v failed\", fn)\n\t}\n\tkprofFold(callerfn, n, res, parent)\n",
	},
	{
		old: "\tbudget := inlineBigFunctionNodes\n",
		new: "\tbudget := inlineBigFunctionNodes + kprofNodes(fn)\n",
	},
	{
		old: "\nopSwitch:\n\tswitch n.Op() {\n",
		new: "\n\tif user, ok := kprofInserted(n); ok {\n" +
			"\t\tir.Visit(n, func(x ir.Node) {\n\t\t\tif x, ok := x.(*ir.Name); ok && x.Class == ir.PAUTO {\n\t\t\t\tv.usedLocals.Add(x)\n\t\t\t}\n\t\t})\n" +
			"\t\tfor _, u := range user {\n\t\t\tif v.do(u) {\n\t\t\t\treturn true\n\t\t\t}\n\t\t}\n" +
			"\t\treturn false\n\t}\nopSwitch:\n\tswitch n.Op() {\n",
	},
}

// inlinerCode is appended to inl.go.
const inlinerCode = `
// kprofLocal reports whether x is the variable in which kprof accumulates
// a function's charges.
func kprofLocal(x ir.Node) bool {
	return x != nil && x.Op() == ir.ONAME && x.Sym() != nil && x.Sym().Name == "_kp"
}

// kprofCallee returns the name of the function of package counter that x
// calls, if x is such a call.
func kprofCallee(x ir.Node) (string, bool) {
	const pkg = "` + CounterPath + `"
	call, ok := x.(*ir.CallExpr)
	if !ok || call.Op() != ir.OCALLFUNC {
		return "", false
	}
	if f, ok := call.Fun.(*ir.Name); ok && f.Class == ir.PFUNC && f.Sym().Pkg.Path == pkg {
		return f.Sym().Name, true
	}
	if call.Fun.Op() == ir.OMETHEXPR {
		if m := ir.MethodExprName(call.Fun); m != nil && m.Sym().Pkg.Path == pkg {
			return "Of", true
		}
	}
	return "", false
}

// kprofTick reports whether x is a tick: a call of counter.T, TC or TCL.
func kprofTick(x ir.Node) bool {
	name, ok := kprofCallee(x)
	return ok && (name == "T" || name == "TC" || name == "TCL")
}

// kprofLate holds the calls evaluated after their function's last flush of
// its accumulator: in return results and panic arguments. kprofScanned
// holds the functions whose bodies were searched for them, and whether
// they call package counter (kprof instrumented them).
var (
	kprofLate    = map[ir.Node]bool{}
	kprofScanned = map[*ir.Func]bool{}
)

// kprofScan searches fn's body for late calls and reports whether it calls
// package counter.
func kprofScan(fn *ir.Func) bool {
	counted, ok := kprofScanned[fn]
	if ok {
		return counted
	}
	mark := func(x ir.Node) {
		ir.Visit(x, func(y ir.Node) {
			if y.Op() == ir.OCALLFUNC {
				kprofLate[y] = true
			}
		})
	}
	ir.VisitList(fn.Body, func(x ir.Node) {
		switch x.Op() {
		case ir.ORETURN, ir.OPANIC:
			mark(x)
		case ir.OCALLFUNC:
			name, ok := kprofCallee(x)
			counted = counted || ok
			if ok && (name == "Of" || strings.HasPrefix(name, "R")) {
				mark(x)
			}
		}
	})
	kprofScanned[fn] = counted
	return counted
}

// kprofFold moves the charges of an inlined body that only charges (a
// small leaf: no check, no push) from the goroutine's count to the
// accumulator of callerfn, when the call is in callerfn's own code (parent,
// the call's inline tree index, is -1), where callerfn's next check or
// flush takes them, as it took them from the count. A call evaluated
// after callerfn's last flush keeps its charges in the count.
func kprofFold(callerfn *ir.Func, call *ir.CallExpr, res *ir.InlinedCallExpr, parent int) {
	if parent >= 0 {
		// Inside an inlined body, whose returns are assignments and
		// jumps by now: which calls follow its last flush is no longer
		// visible (a leaf's results are not wrapped in Of).
		return
	}
	var kp *ir.Name
	for _, d := range callerfn.Dcl {
		if d.Class == ir.PAUTO && kprofLocal(d) && !d.InlLocal() && !d.InlFormal() {
			kp = d
			break
		}
	}
	// A user's variable of that name in code kprof did not instrument
	// (-pkgs) is left alone.
	if kp == nil || kp.Type().Kind() != types.TINT64 || !kprofScan(callerfn) || kprofLate[call] {
		return
	}
	// Only a body that returns normally: one that panics (or calls what
	// might not return) would leave its charges in an accumulator that
	// the unwinding frame never flushes.
	only := true
	ir.VisitList(res.Body, func(x ir.Node) {
		switch x.Op() {
		case ir.OPANIC, ir.OCALLINTER, ir.OCALLMETH, ir.OGO, ir.ODEFER:
			only = false
		case ir.OCALLFUNC:
			if name, ok := kprofCallee(x); !ok || name != "C" {
				only = false
			}
		}
		if kprofLocal(x) {
			only = false
		}
	})
	if !only {
		return
	}
	var edit func(ir.Node) ir.Node
	edit = func(x ir.Node) ir.Node {
		if name, ok := kprofCallee(x); ok && name == "C" {
			// counter.C(n int64): the accumulator is an int64 too.
			c := x.(*ir.CallExpr)
			as := ir.NewAssignOpStmt(c.Pos(), ir.OADD, kp, c.Args[0])
			as.SetTypecheck(1)
			return as
		}
		ir.EditChildren(x, edit)
		return x
	}
	ir.EditChildren(res, edit)
}

// kprofNodes returns the number of nodes of fn's body that kprof
// inserted: IsBigFunc does not count them, so that instrumentation does
// not make a function "big", where the inliner inlines only the
// cheapest calls.
func kprofNodes(fn *ir.Func) int {
	n := 0
	var visit func(x ir.Node) bool
	visit = func(x ir.Node) bool {
		if user, ok := kprofInserted(x); ok {
			ir.Any(x, func(ir.Node) bool { n++; return false })
			for _, u := range user {
				ir.Any(u, func(ir.Node) bool { n--; return false })
			}
			return false
		}
		return ir.DoChildren(x, visit)
	}
	ir.DoChildren(fn, visit)
	return n
}

// kprofInserted reports whether n is code kprof inserted, and returns the
// user's code inside it that the inliner must still cost.
func kprofInserted(n ir.Node) ([]ir.Node, bool) {
	switch n.Op() {
	case ir.OANDAND:
		// A tick: T(n) && (operand).
		if x := n.(*ir.LogicalExpr); kprofTick(x.X) {
			return []ir.Node{x.Y}, true
		}
	case ir.OIF:
		if _, ok := kprofCallee(n.(*ir.IfStmt).Cond); ok {
			return nil, true
		}
	case ir.OAS:
		as := n.(*ir.AssignStmt)
		if kprofLocal(as.X) {
			return nil, true
		}
		if as.Y == nil {
			break
		}
		if _, ok := kprofCallee(as.Y); ok {
			return nil, true
		}
		if ir.IsBlank(as.X) && as.Y.Op() == ir.ONAME && as.Y.Sym() != nil && (as.Y.Sym().Name == "_kd" || as.Y.Sym().Name == "_kp") {
			return nil, true
		}
	case ir.OASOP:
		if kprofLocal(n.(*ir.AssignOpStmt).X) {
			return nil, true
		}
	case ir.ODCL:
		if kprofLocal(n.(*ir.Decl).X) {
			return nil, true
		}
	case ir.OCALLFUNC:
		name, ok := kprofCallee(n)
		if !ok {
			break
		}
		call := n.(*ir.CallExpr)
		args := call.Args
		switch {
		case name == "Of" && len(args) > 0:
			// The receiver is the saved depth. Of(f()) with a tuple f was
			// rewritten to temporaries assigned in the call's init: cost
			// f() alone, as the plain return statement did.
			var user []ir.Node
			for _, in := range call.Init() {
				if as, ok := in.(*ir.AssignListStmt); ok {
					user = append(user, as.Rhs...)
				} else {
					user = append(user, in)
				}
			}
			if len(user) > 0 {
				return user, true
			}
			return args[1:], true
		case (strings.HasPrefix(name, "V") || strings.HasPrefix(name, "R1")) && len(args) > 0:
			return args[len(args)-1:], true
		}
		return nil, true
	}
	return nil, false
}
`

// The compiler marks every inlined call with an inline mark: a
// zero-size pseudo-instruction that becomes a real NOP when no other
// instruction sits at the call's source position. The runtime needs a mark
// only for an inlined body that owns at least one instruction (its PC leads
// the traceback back to the caller); the marks of bodies with no
// instruction are left out of the function's inline tree anyway. kprof's
// fast paths inline through st() and runtime.KprofState, whose bodies
// compile to nothing (g is a register): without this patch most charges
// and checks carried a NOP, a fifth of kprof's overhead. The patch makes
// the marks of instructionless bodies zero-size, in every function.
var ssagenPatches = []struct{ old, new string }{
	{
		old: "\t\t// Any unmatched inline marks now need to be added to the inlining tree (and will generate a nop instruction).\n\t\tfor _, p := range inlMarkList {\n\t\t\tif p.As != obj.ANOP {\n",
		new: "\t\tkprofUsed := kprofInlineIndexes(s.pp.Text, inlMarks)\n" +
			"\t\t// Any unmatched inline marks now need to be added to the inlining tree (and will generate a nop instruction).\n\t\tfor _, p := range inlMarkList {\n" +
			"\t\t\tif p.As != obj.ANOP && !kprofUsed[inlMarks[p]] {\n\t\t\t\tp.As = obj.ANOP\n\t\t\t\tp.Pos = src.NoXPos\n\t\t\t\tp.From = obj.Addr{}\n\t\t\t\tp.To = obj.Addr{}\n\t\t\t}\n" +
			"\t\t\tif p.As != obj.ANOP {\n",
	},
}

// ssagenCode is appended to ssagen/ssa.go.
const ssagenCode = `
// kprofInlineIndexes returns the inline tree indexes that some instruction
// of the function (other than an inline mark) lies in, with their ancestors.
func kprofInlineIndexes(text *obj.Prog, marks map[*obj.Prog]int32) map[int32]bool {
	used := make(map[int32]bool)
	for p := text; p != nil; p = p.Link {
		if _, ok := marks[p]; ok || !p.Pos.IsKnown() {
			continue
		}
		for ix := base.Ctxt.InnermostPos(p.Pos).Base().InliningIndex(); ix >= 0 && !used[int32(ix)]; ix = base.Ctxt.InlTree.Parent(ix) {
			used[int32(ix)] = true
		}
	}
	return used
}
`

// compilerPatch is one file of the compiler that kprof edits.
type compilerPatch struct {
	file  string // under GOROOT/src/cmd/compile/internal
	edits []struct{ old, new string }
	code  string // appended
}

var compilerPatches = []compilerPatch{
	{"inline/inl.go", inlinerPatches, inlinerCode},
	{"ssagen/ssa.go", ssagenPatches, ssagenCode},
}

// PatchedCompiler returns the path of kprof's compiler for the toolchain
// at goroot, building it into cacheDir the first time (about half a minute).
func PatchedCompiler(goroot, goVersion, cacheDir string) (string, error) {
	replace := make(map[string]string)
	patched := make(map[string][]byte)
	hash := sha256.New()
	for _, cp := range compilerPatches {
		src := filepath.Join(goroot, "src", "cmd", "compile", "internal", filepath.FromSlash(cp.file))
		data, err := os.ReadFile(src)
		if err != nil {
			return "", fmt.Errorf("kprof: reading the compiler's %s: %v", cp.file, err)
		}
		for _, p := range cp.edits {
			if bytes.Count(data, []byte(p.old)) != 1 {
				return "", fmt.Errorf("kprof: the compiler's %s in %s does not have the shape kprof patches; kprof supports %s.x only (or build with -kprof.stockcompiler)", cp.file, goVersion, SupportedGo)
			}
			data = bytes.Replace(data, []byte(p.old), []byte(p.new), 1)
		}
		data = append(data, cp.code...)
		patched[src] = data
		hash.Write(data)
	}
	h := hash.Sum(nil)
	id := goVersion + "-" + hex.EncodeToString(h[:8])
	// The go command expects the tool to be called "compile" (-V=full).
	dir := filepath.Join(cacheDir, "compile-"+id)
	exe := filepath.Join(dir, "compile")
	if _, err := os.Stat(exe); err == nil {
		return exe, nil
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(cacheDir, "compile-build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	for src, data := range patched {
		name := filepath.Join(tmp, filepath.Base(src))
		if err := os.WriteFile(name, data, 0o666); err != nil {
			return "", err
		}
		replace[src] = name
	}
	overlay, _ := json.Marshal(map[string]map[string]string{"Replace": replace})
	ov := filepath.Join(tmp, "overlay.json")
	if err := os.WriteFile(ov, overlay, 0o666); err != nil {
		return "", err
	}
	out := filepath.Join(tmp, "compile")
	cmd := exec.Command(filepath.Join(goroot, "bin", "go"), "build", "-overlay", ov, "-o", out, "cmd/compile")
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GOOS=", "GOARCH=", "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("kprof: building the patched compiler: %v\n%s", err, strings.TrimSpace(stderr.String()))
	}
	if err := os.Rename(out, exe); err != nil {
		return "", err
	}
	return exe, nil
}
