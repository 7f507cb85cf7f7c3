package main

import (
	"debug/dwarf"
	"debug/elf"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"golang.org/x/arch/x86/x86asm"
)

// TestCountInRegisters disassembles instrumented functions and checks
// that kprof's compiler keeps the goroutine's count in a register between
// calls where a loop updates it (toolchain/patches/go1.26/compile/ssa,
// kprofPromote): a charge is then an addition to a register and a check a
// compare of registers, so that no charge waits on the one before it
// through memory. The count lives in the goroutine's g (register R14):
// every instruction that reaches it is a load (at entry and after a call)
// or a store (before a call or a return), never a read-modify-write or a
// compare with memory. A function whose loops only read the count (their
// charges go to a local accumulator) keeps it in memory, where a register
// would only add to the loop's register pressure. In both, a check's slow
// path is laid out of line (likelyadjustPatches, layoutPatches): no
// fall-through of a conditional branch runs into a call of package
// counter's slow paths.
//
// The functions: main.sorted of testdata/semantics/funcforpc
// (slices.IsSorted's loop: an inlined comparison that pushes itself and
// charges the count), main.(*rng).below
// of testdata/progs/merges (a loop around an inlined call whose entry
// charges the count), and, in memory, main.work of testdata/many (a loop
// whose charges accumulate in a register) and main.sumSquares of
// testdata/progs/folds (inlined small leaves folded into the
// accumulator); and main.main of testdata/inlinedloop, a loop inlined into
// a function that calls, whose checks' slow paths read g again.
func TestCountInRegisters(t *testing.T) {
	heavy(t)
	if runtime.GOARCH != "amd64" {
		t.Skip("amd64 only")
	}
	kprofBin := buildKprof(t)
	for _, tc := range []struct {
		dir, fn   string
		registers bool
		elided    bool // every push's entry is stored in slow paths only
		// No push's entry is stored inside a loop: the function's own
		// push, which its calls read, may be.
		loopsElided bool
	}{
		{"../../testdata/semantics/funcforpc", "main.sorted", true, true, false},
		{"../../testdata/progs/merges", "main.(*rng).below", true, false, false},
		{"../../testdata/many", "main.work", false, false, false},
		{"../../testdata/progs/folds", "main.sumSquares", false, false, false},
		{"../../testdata/inlinedloop", "main.main", true, false, false},
		{"../../testdata/inlinedpush", "main.main", true, false, true},
	} {
		t.Run(tc.fn, func(t *testing.T) {
			bin := kprofBuild(t, kprofBin, tc.dir, "-pkgs", "main")
			insts, addr := disassembleAt(t, bin, tc.fn)
			symbolAt := symbolizer(t, bin)
			onCount := countOperand(insts)
			onGran := func(a x86asm.Arg) bool {
				m, ok := a.(x86asm.Mem)
				return ok && onCount(x86asm.Mem{Base: m.Base, Disp: m.Disp - 8})
			}
			slowCall := func(i int) bool {
				rel, ok := insts[i].Args[0].(x86asm.Rel)
				if insts[i].Op != x86asm.CALL || !ok {
					return false
				}
				name := symbolAt(addr + uint64(offsetOf(insts, i+1)+int64(rel)))
				switch strings.TrimPrefix(name, "github.com/kprof/kprof/counter.") {
				case "S", "SE", "SED", "SK", "SD", "sl":
					return true
				}
				return false
			}
			isJump := func(in x86asm.Inst) bool { return strings.HasPrefix(in.Op.String(), "J") }
			// inLoop reports whether instruction i lies in a loop that
			// calls nothing: between a backward jump and its target with
			// no call between (a slow path laid out after the function's
			// code jumps back across its calls). pushes are the bodies
			// of counter.P and PushAt inlined, where an entry's store
			// that was not moved to the slow paths stays.
			var pushes [][2]uint64
			if tc.loopsElided {
				pushes = inlinedRanges(t, bin, "github.com/kprof/kprof/counter.P", "github.com/kprof/kprof/counter.PushAt")
			}
			inLoop := func(i int) bool {
				for j, in := range insts {
					rel, ok := in.Args[0].(x86asm.Rel)
					if !isJump(in) || !ok || rel >= 0 {
						continue
					}
					k := indexAt(insts, offsetOf(insts, j+1)+int64(rel))
					if k >= 0 && k <= i && i < j && !slices.ContainsFunc(insts[k:j], func(x x86asm.Inst) bool { return x.Op == x86asm.CALL }) {
						return true
					}
				}
				return false
			}
			loads, stores, inMemory, calls, checks, entries := 0, 0, 0, 0, 0, 0
			for i, in := range insts {
				if in.Op == x86asm.CALL {
					calls++
				}
				if storesEntry(in) {
					// sorted's own push and less's, inlined in its loop,
					// are read by no call but the slow paths'
					// (kprofElidePushes): their entries are stored right
					// before those calls, not on the fast path.
					entries++
					// The first call or return after it, through a few
					// branches: unconditional jumps (the call may be laid
					// out elsewhere) and the fall-through of conditional
					// ones (the next entry's bounds test).
					j := i
					for hops := 0; hops < 6; hops++ {
						k := slices.IndexFunc(insts[j+1:], func(x x86asm.Inst) bool {
							return x.Op == x86asm.CALL || x.Op == x86asm.RET || isJump(x)
						})
						if k < 0 {
							j = -1
							break
						}
						j += 1 + k
						rel, ok := insts[j].Args[0].(x86asm.Rel)
						if insts[j].Op == x86asm.CALL || insts[j].Op == x86asm.RET || !ok {
							break
						}
						if insts[j].Op != x86asm.JMP {
							continue
						}
						j = indexAt(insts, offsetOf(insts, j+1)+int64(rel)) - 1
						if j < -1 {
							break
						}
					}
					slowAfter := j >= 0 && j < len(insts) && slowCall(j)
					if tc.elided && !slowAfter {
						t.Errorf("%v: a push's entry is stored where no slow path's call follows", in)
					}
					if pc := addr + uint64(offsetOf(insts, i)); tc.loopsElided && inLoop(i) && slices.ContainsFunc(pushes, func(r [2]uint64) bool { return r[0] <= pc && pc < r[1] }) {
						t.Errorf("%v: a push's entry is stored in a loop, where counter.P put it", in)
					}
				}
				for k, a := range in.Args {
					if a == nil || !onCount(a) {
						continue
					}
					switch {
					case in.Op == x86asm.MOV && k == 1:
						loads++
					case in.Op == x86asm.MOV && k == 0:
						stores++
						// Only a call or a return follows, with no branch
						// between.
						if !followedBy(insts, i, x86asm.CALL) && !followedBy(insts, i, x86asm.RET) {
							t.Errorf("%v: the count is stored where no call or return follows", in)
						}
					default:
						inMemory++
						if tc.registers {
							t.Errorf("%v: the count is read and written in memory, not kept in a register", in)
						}
					}
				}
				if !isJump(in) || in.Op == x86asm.JMP {
					continue
				}
				// The fall-through of a conditional branch must not be a
				// slow path (the branch target may be: a check), unless
				// the branch is the slow path's own: the bounds test of
				// an entry it stores for a push elided from the fast
				// path (kprofElidePushes).
				// A slow path may start with SLK's test of exact mode, a
				// read of the granularity (the field after the count),
				// which nothing on a fast path reads.
				for j := i + 1; j < len(insts) && !isJump(insts[j]) && insts[j].Op != x86asm.RET && !storesEntry(insts[j]); j++ {
					if slowCall(j) || slices.ContainsFunc(insts[j].Args[:], onGran) {
						t.Errorf("%v: the fast path jumps over the slow path (%v)", in, insts[j])
						break
					}
				}
				if rel, ok := in.Args[0].(x86asm.Rel); ok {
					for j := indexAt(insts, offsetOf(insts, i+1)+int64(rel)); j >= 0 && j < len(insts) && !isJump(insts[j]) && insts[j].Op != x86asm.RET; j++ {
						if slowCall(j) {
							checks++
							break
						}
					}
				}
			}
			t.Logf("%s: %d loads and %d stores of the count, %d other accesses, %d calls, %d checks, %d stores of entries", tc.fn, loads, stores, inMemory, calls, checks, entries)
			switch {
			case checks == 0:
				t.Errorf("%s: no check: the function no longer has the shape this test is about", tc.fn)
			case tc.elided && entries == 0:
				t.Errorf("%s: no push's entry stored: the function no longer has the shape this test is about", tc.fn)
			case tc.registers && (loads == 0 || stores == 0):
				t.Errorf("%s: %d loads and %d stores of the count: not kept in a register", tc.fn, loads, stores)
			case tc.registers && loads > calls+1:
				t.Errorf("%s: %d loads of the count for %d calls: it is loaded only at entry and after a call", tc.fn, loads, calls)
			case !tc.registers && (loads != 0 || inMemory == 0):
				t.Errorf("%s: %d loads of the count into a register, %d accesses in memory: its loops only read the count, which should stay in memory", tc.fn, loads, inMemory)
			}
		})
	}
}

// symbolizer returns a function that names the ELF symbol at an address
// of the binary bin.
func symbolizer(t *testing.T, bin string) func(uint64) string {
	syms, err := openELF(t, bin).Symbols()
	if err != nil {
		t.Fatal(err)
	}
	return func(pc uint64) string {
		for _, s := range syms {
			if s.Value <= pc && pc < s.Value+s.Size {
				return s.Name
			}
		}
		return ""
	}
}

// countOperand returns a function that reports whether an operand is the
// goroutine's count, found in insts: the entry check is the first to read
// a field of g other than the stack bound (loaded into a register, or
// compared in memory by the stock compiler).
func countOperand(insts []x86asm.Inst) func(x86asm.Arg) bool {
	disp := int64(-1)
	for _, in := range insts {
		m, ok := in.Args[1].(x86asm.Mem)
		if in.Op == x86asm.CMP {
			m, ok = in.Args[0].(x86asm.Mem)
		}
		if ok && (in.Op == x86asm.CMP || in.Op == x86asm.MOV) && m.Base == x86asm.R14 && m.Disp != 0x10 {
			disp = m.Disp
			break
		}
	}
	return func(a x86asm.Arg) bool {
		m, ok := a.(x86asm.Mem)
		return ok && m.Base == x86asm.R14 && m.Disp == disp
	}
}

// TestFoldedCharges checks that the patched inliner folds the charges and
// checks of small leaves inlined into a function that accumulates its
// charges (toolchain/patches/go1.26/compile, kprofFold): in
// main.sumSquares of testdata/progs/folds, sq and cube are inlined and
// no instruction inlined from them writes the count (their checks compare
// it with the accumulator), but to store it before a slow path's call; the
// stock compiler's build, whose inliner costs kprof's code (a leaf's check
// calls the slow path) and inlines neither, counts exactly too.
func TestFoldedCharges(t *testing.T) {
	heavy(t)
	if runtime.GOARCH != "amd64" {
		t.Skip("amd64 only")
	}
	kprofBin := buildKprof(t)
	const dir = "../../testdata/progs/folds"
	want := oracleTotal(t, filepath.Join(dir, "main.go")).total
	// writes returns how many instructions of main.sumSquares write the
	// count, and how many of them come from sq or cube.
	writes := func(flags ...string) (all, leaves, ranges int) {
		bin := kprofBuild(t, kprofBin, dir, append([]string{"-pkgs", "main"}, flags...)...)
		if got := runProfile(t, bin, "exact").TotalInstructions; got != want {
			t.Errorf("kprof build %v: exact total %d, oracle %d (δ %+d)", flags, got, want, got-want)
		}
		insts, addr := disassembleAt(t, bin, "main.sumSquares")
		inlined := inlinedRanges(t, bin, "main.sq", "main.cube")
		ranges = len(inlined)
		onCount := countOperand(insts)
		for i, in := range insts {
			switch in.Op {
			case x86asm.ADD, x86asm.SUB, x86asm.DEC, x86asm.INC, x86asm.MOV:
				if onCount(in.Args[0]) && !followedBy(insts, i, x86asm.CALL) {
					all++
					pc := addr + uint64(offsetOf(insts, i))
					if slices.ContainsFunc(inlined, func(r [2]uint64) bool { return r[0] <= pc && pc < r[1] }) {
						leaves++
					}
				}
			}
		}
		return all, leaves, ranges
	}
	patched, patchedLeaves, inlined := writes()
	stock, stockLeaves, _ := writes("-kprof.stockcompiler")
	t.Logf("writes of the count in main.sumSquares: %d, %d from the leaves, %d inlined ranges (stock compiler: %d, %d)", patched, patchedLeaves, inlined, stock, stockLeaves)
	if inlined == 0 || patchedLeaves != 0 {
		t.Errorf("main.sumSquares writes the count %d times, %d from sq or cube (%d ranges inlined from them): the inlined leaves' charges were not folded", patched, patchedLeaves, inlined)
	}
}

// storesEntry reports whether in stores a register to an entry of an
// array of words, [base+index*8]: in a slow path, the store of a pushed
// function's entry into the goroutine's reified stack.
func storesEntry(in x86asm.Inst) bool {
	m, ok := in.Args[0].(x86asm.Mem)
	return in.Op == x86asm.MOV && ok && m.Index != 0 && m.Scale == 8
}

// followedBy reports whether the first call, return or branch after
// instruction i is an instruction op (CALL or RET).
func followedBy(insts []x86asm.Inst, i int, op x86asm.Op) bool {
	for j := i + 1; j < len(insts); j++ {
		if o := insts[j].Op; o == x86asm.CALL || o == x86asm.RET || strings.HasPrefix(o.String(), "J") {
			return o == op
		}
	}
	return false
}

// inlinedRanges returns the address ranges of the bodies of the named
// functions inlined anywhere in the Go binary bin (DWARF's inlined
// subroutines).
func inlinedRanges(t *testing.T, bin string, names ...string) [][2]uint64 {
	f := openELF(t, bin)
	d, err := f.DWARF()
	if err != nil {
		t.Fatal(err)
	}
	var out [][2]uint64
	r, origin := d.Reader(), d.Reader()
	for {
		e, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if e == nil {
			break
		}
		off, ok := e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset)
		if e.Tag != dwarf.TagInlinedSubroutine || !ok {
			continue
		}
		origin.Seek(off)
		o, err := origin.Next()
		if err != nil || o == nil {
			t.Fatalf("inlined subroutine at %#x: no abstract origin: %v", e.Offset, err)
		}
		if name, _ := o.Val(dwarf.AttrName).(string); !slices.Contains(names, name) {
			continue
		}
		rs, err := d.Ranges(e)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rs...)
	}
	return out
}

// openELF opens the ELF binary bin for the rest of the test.
func openELF(t *testing.T, bin string) *elf.File {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// disassemble returns the instructions of function name in the ELF binary.
func disassemble(t *testing.T, bin, name string) []x86asm.Inst {
	insts, _ := disassembleAt(t, bin, name)
	return insts
}

// disassembleAt is disassemble, with the function's address.
func disassembleAt(t *testing.T, bin, name string) ([]x86asm.Inst, uint64) {
	f := openELF(t, bin)
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	text := f.Section(".text")
	data, err := text.Data()
	if err != nil {
		t.Fatal(err)
	}
	var fn elf.Symbol
	for _, s := range syms {
		if s.Name == name {
			fn = s
		}
	}
	if fn.Size == 0 {
		t.Fatalf("%s not found", name)
	}
	code := data[fn.Value-text.Addr : fn.Value-text.Addr+fn.Size]
	var insts []x86asm.Inst
	for len(code) > 0 {
		in, err := x86asm.Decode(code, 64)
		if err != nil {
			t.Fatal(err)
		}
		insts = append(insts, in)
		code = code[in.Len:]
	}
	return insts, fn.Value
}

func offsetOf(insts []x86asm.Inst, i int) int64 {
	var off int64
	for _, in := range insts[:i] {
		off += int64(in.Len)
	}
	return off
}

func indexAt(insts []x86asm.Inst, off int64) int {
	var cur int64
	for i, in := range insts {
		if cur == off {
			return i
		}
		cur += int64(in.Len)
	}
	return -1
}

// TestQuietFlushDropped checks kprof's compiler drops the flush before a
// quiet call that it inlines and folds (counter.CQ): sqSum accumulates in
// a register and calls sq, a small leaf, in its loop; with sq folded, the
// loop writes the count nowhere (its return flushes). The flush kept
// would write it in every iteration.
func TestQuietFlushDropped(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("amd64 only")
	}
	kprofBin := buildKprof(t)
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"go.mod": "module example.com/quiet\n\ngo 1.22\n",
		"main.go": `package main

import "fmt"

func sq(x int) int { return x * x }

//go:noinline
func sqSum(from, to int) int {
	r := 0
	for from <= to {
		r += sq(from)
		from++
	}
	return r
}

func main() { fmt.Println(sqSum(1, 40)) }
`,
	})
	bin := kprofBuild(t, kprofBin, dir)
	insts := disassemble(t, bin, "main.sqSum")
	onCount := countOperand(insts)
	writes := func(from, to int) []string {
		var w []string
		for _, in := range insts[from:to] {
			switch in.Op {
			case x86asm.ADD, x86asm.SUB, x86asm.DEC, x86asm.INC, x86asm.MOV:
				if onCount(in.Args[0]) {
					w = append(w, in.String())
				}
			}
		}
		return w
	}
	// The loop: the shortest span from the target of a backward jump to
	// the jump (the slow paths, laid out after the function's code, jump
	// back into it too).
	from, to := -1, -1
	for i, in := range insts {
		rel, ok := in.Args[0].(x86asm.Rel)
		if !ok || !strings.HasPrefix(in.Op.String(), "J") || rel >= 0 {
			continue
		}
		target := offsetOf(insts, i+1) + int64(rel)
		start := i
		for start > 0 && offsetOf(insts, start) > target {
			start--
		}
		if from < 0 || i-start < to-from {
			from, to = start, i+1
		}
	}
	if from < 0 {
		t.Fatalf("no loop found in main.sqSum")
	}
	if w := writes(from, to); len(w) > 0 {
		t.Errorf("main.sqSum's loop writes the count: %q", w)
	}
	if len(writes(0, len(insts))) == 0 {
		t.Errorf("main.sqSum never writes the count (its return flushes)")
	}
}

// TestMergedChecks checks that the patched inliner merges the checks of
// small leaves inlined in a row into one (toolchain/patches/go1.26/compile/
// inline, kprofMerge), where nothing between them reads or changes the
// count, and only there: kprof build -gcflags=-m=2 reports each merge at
// the chain's last leaf. testdata/progs/chains holds the shapes that merge
// (ORed loads in a loop condition, getters in a comparison, leaves in
// consecutive statements, generic and method leaves, each also inlined
// into main; checks folded into an accumulator and checks that charge the
// count) and those that must not (main.cut: a call between two
// leaves, leaves on either side of && and ||, a leaf in a branch). That
// the merged code counts exactly is TestExactAgainstOracle's (the program
// is one of its oracle programs).
func TestMergedChecks(t *testing.T) {
	kprofBin := buildKprof(t)
	dir, _ := filepath.Abs("../../testdata/progs/chains")
	out, err := runCmd(dir, nil, kprofBin, "build", "-o", filepath.Join(t.TempDir(), "chains"), "-pkgs", "main", "-gcflags=-m=2", ".")
	if err != nil {
		t.Fatalf("kprof build: %v\n%s", err, out)
	}
	var got []string
	for _, line := range strings.Split(out, "\n") {
		if i := strings.Index(line, ": kprof: one check for "); i >= 0 {
			pos := strings.TrimPrefix(line[:i], "./")
			pos = pos[:strings.LastIndex(pos, ":")] // file:line
			got = append(got, pos+" "+strings.TrimSuffix(line[i+len(": kprof: one check for "):], " inlined leaves"))
		}
	}
	slices.Sort(got)
	want := []string{
		"main.go:112 6", // mixed's generic and method leaves
		"main.go:142 4", // closer, inlined into main
		"main.go:154 3", // norms, inlined into main
		"main.go:156 6", // mixed, inlined into main
		"main.go:23 4",  // ascii's loop condition
		"main.go:44 4",  // closer's comparison
		"main.go:58 4",  // less's result: the checks charge the count
		"main.go:68 3",  // norm's statements, between its push and pop
		"main.go:78 3",  // norms' statements
	}
	if !slices.Equal(got, want) {
		t.Errorf("merged checks (file:line leaves):\n got %q\nwant %q\n%s", got, want, out)
	}
}
