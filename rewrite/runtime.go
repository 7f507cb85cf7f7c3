package rewrite

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
)

// SupportedGo names the Go versions whose runtime the patch fits.
const SupportedGo = "go1.26"

// runtimeFile is added to package runtime: the per-goroutine state and the
// exported accessors package counter uses.
const runtimeFile = `// Code added by kprof. DO NOT EDIT.

package runtime

import (
	"internal/runtime/exithook"
	"unsafe"
)

// KprofGState is kprof's per-goroutine state, a field of every g.
type KprofGState struct {
	Count   int64          // instructions left until the next sample is due
	Gran    int64          // granularity Count started from; 0 until registered
	Depth   int            // entries of the reified stack in use
	InAgent bool           // the agent is running on this goroutine
	Known   bool           // registered with the agent
	Stack   []uintptr      // reified stack: addresses of counter.Func
	Local   unsafe.Pointer // the agent's per-goroutine state
	Done    int64          // instructions of periods that have ended (reported or not)
	Frozen  int64          // instructions executed when the agent was entered
}

// executed is the number of instructions the goroutine has run: its ended
// periods and the current one; while the agent runs, what it had run when
// the agent was entered.
func (k *KprofGState) executed() int64 {
	if k.InAgent {
		return k.Frozen
	}
	return k.Done + k.Gran - k.Count
}

// kprofRetired sums what goroutines that have exited executed; allglock
// guards it.
var kprofRetired int64

// KprofExecuted returns the number of instructions all goroutines have
// executed so far. It is exact when the other goroutines are not running
// (blocked, or ended); it locks the runtime's list of goroutines.
func KprofExecuted() int64 {
	lock(&allglock)
	n := kprofRetired
	for _, gp := range allgs {
		if readgstatus(gp) != _Gdead {
			n += gp.kprof.executed()
		}
	}
	unlock(&allglock)
	return n
}

var kprofGoexitHook func()

// KprofState returns the running goroutine's kprof state.
func KprofState() *KprofGState { return &getg().kprof }

// KprofOnUserStack reports whether the caller runs on a user goroutine's
// stack (not g0 or the signal stack), where the agent may run.
func KprofOnUserStack() bool {
	gp := getg()
	return gp.m != nil && gp == gp.m.curg
}

// KprofSetGoexitHook sets the function every goroutine calls as it exits.
func KprofSetGoexitHook(f func()) { kprofGoexitHook = f }

// KprofAddExitHook runs f when the program exits (main returns or os.Exit).
func KprofAddExitHook(f func()) {
	exithook.Add(exithook.Hook{F: f, RunOnFailure: true})
}

// KprofAlloc returns size bytes of zeroed memory outside the Go heap, never
// freed: the agent's data is invisible to the program's allocation counts
// and to the garbage collector. It must not hold pointers to heap objects.
func KprofAlloc(size uintptr) unsafe.Pointer {
	return persistentalloc(size, 8, &memstats.other_sys)
}

// KprofForEachOther reports, for every goroutine other than the caller
// that counted instructions since its last sample, its reified stack, that
// count and its agent slot, and starts a new period for it: at program
// exit the agent collects what running goroutines executed. The reading is
// done here, in the runtime, because the goroutines may still run (a
// count may then be slightly off; nothing else is shared). f runs with the
// runtime's list of goroutines locked: it must not block, allocate on the
// heap or start goroutines.
func KprofForEachOther(f func(stack []uintptr, n int64, local unsafe.Pointer)) {
	me := getg().m.curg
	forEachG(func(gp *g) {
		k := &gp.kprof
		if gp == me || readgstatus(gp) == _Gdead {
			return
		}
		n := k.Gran - k.Count
		if n <= 0 {
			return
		}
		k.Done += n
		k.Count = k.Gran
		d := k.Depth
		if d > len(k.Stack) {
			d = len(k.Stack)
		}
		f(k.Stack[:d], n, k.Local)
	})
}

func kprofGoexit() {
	if h := kprofGoexitHook; h != nil {
		h()
	}
	gp := getg()
	k := &gp.kprof
	// Retiring its count and clearing the state is one step for
	// KprofExecuted, which may run at the same time.
	lock(&allglock)
	kprofRetired += k.executed()
	k.Count, k.Gran, k.Depth, k.InAgent, k.Known, k.Local, k.Done = 0, 0, 0, false, false, nil, 0
	unlock(&allglock)
	if raceenabled {
		racereleasemergeg(gp, unsafe.Pointer(k))
	}
}
`

// patchRuntime rewrites the compile step of package runtime: runtime.g
// gets the kprof field, goroutine exit calls kprofGoexit, and kprof.go is
// added. It returns the new list of Go files. It fails closed: a runtime
// whose source does not have the expected shape gets a clear error.
func patchRuntime(files []string, workDir, goVersion string) ([]string, error) {
	unsupported := func(what string) error {
		return fmt.Errorf("kprof: the runtime of %s does not have the shape kprof patches (%s); kprof supports %s.x only", goVersion, what, SupportedGo)
	}
	done := make(map[string]bool)
	out := make([]string, 0, len(files)+1)
	for _, f := range files {
		var patch func([]byte) ([]byte, error)
		switch filepath.Base(f) {
		case "runtime2.go":
			// The field goes last: the compiler and the assembly know the
			// offsets of g's first fields.
			patch = func(src []byte) ([]byte, error) {
				end, err := structEnd(f, src, "g")
				if err != nil {
					return nil, unsupported(err.Error())
				}
				field := "\tkprof KprofGState // kprof: per-goroutine instruction counter and reified stack\n"
				return append(src[:end:end], append([]byte(field), src[end:]...)...), nil
			}
		case "proc.go":
			patch = func(src []byte) ([]byte, error) {
				const old = "\nfunc goexit1() {\n"
				if bytes.Count(src, []byte(old)) != 1 {
					return nil, unsupported("proc.go: func goexit1")
				}
				src = bytes.Replace(src, []byte(old), []byte(old+"\tkprofGoexit()\n"), 1)
				// A g is reused by later goroutines: under the race
				// detector, each one's kprof state happens after the
				// previous owner's (kprofGoexit releases it).
				const race = "\t\tnewg.raceignore = 0\n"
				if bytes.Count(src, []byte(race)) != 1 {
					return nil, unsupported("proc.go: newproc1's race context")
				}
				return bytes.Replace(src, []byte(race), []byte(race+"\t\traceacquireg(newg, unsafe.Pointer(&newg.kprof))\n"), 1), nil
			}
		default:
			out = append(out, f)
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		if src, err = patch(src); err != nil {
			return nil, err
		}
		// The inserted line takes the number of the one before it.
		src = append([]byte(fmt.Sprintf("//line %s:1\n", f)), src...)
		nf := filepath.Join(workDir, filepath.Base(f))
		if err := os.WriteFile(nf, src, 0o666); err != nil {
			return nil, err
		}
		out = append(out, nf)
		done[filepath.Base(f)] = true
	}
	for _, name := range []string{"runtime2.go", "proc.go"} {
		if !done[name] {
			return nil, unsupported(name + " not found")
		}
	}
	nf := filepath.Join(workDir, "kprof_runtime.go")
	if err := os.WriteFile(nf, []byte(runtimeFile), 0o666); err != nil {
		return nil, err
	}
	return append(out, nf), nil
}

// structEnd returns the offset of the line holding the closing brace of
// the struct type name declared in src.
func structEnd(filename string, src []byte, name string) (int, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filename, src, parser.SkipObjectResolution)
	if err != nil {
		return 0, err
	}
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.TYPE {
			continue
		}
		for _, sp := range gd.Specs {
			ts := sp.(*ast.TypeSpec)
			if st, ok := ts.Type.(*ast.StructType); ok && ts.Name.Name == name {
				off := fset.Position(st.Fields.Closing).Offset
				return bytes.LastIndexByte(src[:off], '\n') + 1, nil
			}
		}
	}
	return 0, fmt.Errorf("%s: no struct type %s", filepath.Base(filename), name)
}
