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
		old: "\nopSwitch:\n\tswitch n.Op() {\n",
		new: "\n\tif user, ok := kprofInserted(n); ok {\n" +
			"\t\tir.Visit(n, func(x ir.Node) {\n\t\t\tif x, ok := x.(*ir.Name); ok && x.Class == ir.PAUTO {\n\t\t\t\tv.usedLocals.Add(x)\n\t\t\t}\n\t\t})\n" +
			"\t\tfor _, u := range user {\n\t\t\tif v.do(u) {\n\t\t\t\treturn true\n\t\t\t}\n\t\t}\n" +
			"\t\treturn false\n\t}\nopSwitch:\n\tswitch n.Op() {\n",
	},
}

// inlinerCode is appended to inl.go.
const inlinerCode = `
// kprofInserted reports whether n is code kprof inserted, and returns the
// user's code inside it that the inliner must still cost.
func kprofInserted(n ir.Node) ([]ir.Node, bool) {
	const pkg = "` + CounterPath + `"
	callee := func(x ir.Node) (string, bool) {
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
	switch n.Op() {
	case ir.OIF:
		if _, ok := callee(n.(*ir.IfStmt).Cond); ok {
			return nil, true
		}
	case ir.OAS:
		as := n.(*ir.AssignStmt)
		if as.Y == nil {
			break
		}
		if _, ok := callee(as.Y); ok {
			return nil, true
		}
		if ir.IsBlank(as.X) && as.Y.Op() == ir.ONAME && as.Y.Sym() != nil && as.Y.Sym().Name == "_kd" {
			return nil, true
		}
	case ir.OCALLFUNC:
		name, ok := callee(n)
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

// PatchedCompiler returns the path of kprof's compiler for the toolchain
// at goroot, building it into cacheDir the first time (about half a minute).
func PatchedCompiler(goroot, goVersion, cacheDir string) (string, error) {
	src := filepath.Join(goroot, "src", "cmd", "compile", "internal", "inline", "inl.go")
	data, err := os.ReadFile(src)
	if err != nil {
		return "", fmt.Errorf("kprof: reading the compiler's inliner: %v", err)
	}
	for _, p := range inlinerPatches {
		if bytes.Count(data, []byte(p.old)) != 1 {
			return "", fmt.Errorf("kprof: the inliner of %s does not have the shape kprof patches; kprof supports %s.x only (or build with -kprof.stockcompiler)", goVersion, SupportedGo)
		}
		data = bytes.Replace(data, []byte(p.old), []byte(p.new), 1)
	}
	data = append(data, inlinerCode...)
	h := sha256.Sum256(data)
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
	patched := filepath.Join(tmp, "inl.go")
	if err := os.WriteFile(patched, data, 0o666); err != nil {
		return "", err
	}
	overlay, _ := json.Marshal(map[string]map[string]string{"Replace": {src: patched}})
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
