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

// TestFastPathInstructions disassembles an instrumented function and checks
// the machine code of every granularity check and its block's charge: no
// call on the fast path, and at most four instructions. The count lives in
// the goroutine's g (register R14). These forms occur (the compiler may put
// NOPs in between; they are reported, not counted). The branch goes to the
// slow path, laid out of line, when the count is due: the fast path does
// not take it (a loop's back edge apart):
//   - check, then charge: compare the count with zero, branch to the slow
//     path, subtract the block's weight from memory (3); in a function
//     that accumulates its charges in a register, the entry check is
//     followed by no charge of the count at all (2: the entry block's
//     weight goes to the register);
//   - in a function that accumulates its charges in a register (a loop
//     without calls): compare the count in memory with the register,
//     branch (2), and the block's charge, an addition to that register
//     (1); or, where the compiler loads the count for another use too,
//     load, compare, branch (3) and the charge (1);
//   - at a return, charge, then check: the accumulated charges are flushed
//     with the block's (their sum, a subtraction from memory), then the
//     count is compared and the branch taken (4: a flush per return, not
//     per block); or, where the compiler computes the new count in a
//     register, a load, a subtraction, an addition, a store, the compare
//     and the branch (6).
//
// The first two forms are matched instruction by instruction, so their
// counts are their shapes; a flush is counted from its load to the branch.
func TestFastPathInstructions(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("amd64 only")
	}
	kprofBin := buildKprof(t)
	bin := kprofBuild(t, kprofBin, "../../testdata/many", "-pkgs", "main")
	insts := disassemble(t, bin, "main.work")
	isNop := func(in x86asm.Inst) bool { return in.Op == x86asm.NOP }
	onCount := countOperand(insts)
	isCharge := func(in x86asm.Inst) bool {
		return (in.Op == x86asm.ADD || in.Op == x86asm.SUB || in.Op == x86asm.DEC) && onCount(in.Args[0])
	}
	// prev returns the index of the instruction before i, NOPs skipped.
	prev := func(i int) int {
		for i--; i >= 0 && isNop(insts[i]); i-- {
		}
		return i
	}
	forms := map[string]int{}
	for i, in := range insts {
		if in.Op != x86asm.CMP {
			continue
		}
		j := i + 1
		for j < len(insts) && isNop(insts[j]) {
			j++
		}
		if j == len(insts) || !strings.HasPrefix(insts[j].Op.String(), "J") {
			continue
		}
		nops := j - i - 1
		var form string
		var n int
		// registerForm finds the charge to the accumulator acc before
		// instruction k: a check of the "register" form.
		registerForm := func(k int, acc x86asm.Arg) bool {
			// Search back (the compiler schedules the charge early), up
			// to a call or an unconditional jump.
			for c := k - 1; c >= 0 && c > k-20 && insts[c].Op != x86asm.JMP && insts[c].Op != x86asm.CALL; c-- {
				if (insts[c].Op == x86asm.ADD || insts[c].Op == x86asm.LEA || insts[c].Op == x86asm.INC || insts[c].Op == x86asm.SUB) && insts[c].Args[0] == acc {
					return true
				}
			}
			return false
		}
		switch {
		case onCount(in.Args[0]):
			if acc, ok := in.Args[1].(x86asm.Reg); ok {
				// The count in memory compared with the accumulator.
				if !registerForm(i, acc) {
					continue
				}
				form, n = "register", 3
				break
			}
			if k := prev(i); k >= 0 && isCharge(insts[k]) {
				form, n = "charge, check", 3
				if r, ok := insts[k].Args[1].(x86asm.Reg); ok && insts[k].Op == x86asm.SUB {
					// A flush: the accumulated charges, a register,
					// subtracted from the count, the block's own
					// added to it just before (LEA).
					form = "flush, check"
					if c := prev(k); c >= 0 && insts[c].Op == x86asm.LEA && insts[c].Args[0] == r {
						n++
					}
				}
				break
			} else if k >= 0 && insts[k].Op == x86asm.MOV && onCount(insts[k].Args[0]) {
				// A flush of accumulated charges, then the check: the
				// count is loaded into a register, the charges are
				// applied to it, and it is stored back. Count from the
				// load to the branch, NOPs apart.
				load := -1
				for c := prev(k); c >= 0 && c > k-6; c = prev(c) {
					if insts[c].Op == x86asm.MOV && onCount(insts[c].Args[1]) && insts[c].Args[0] == insts[k].Args[1] {
						load = c
						break
					}
				}
				if load < 0 {
					t.Errorf("%v: a store to the count with no load of it before", insts[k])
					continue
				}
				n = 2 // compare, branch
				for c := load; c <= k; c++ {
					if !isNop(insts[c]) {
						n++
					}
				}
				form = "flush, check"
				break
			}
			// Check, then charge: the charge follows on the fast path,
			// the fall-through where the branch goes to the slow path
			// when the count is due (JLE).
			k := j + 1
			if insts[j].Op != x86asm.JLE {
				target := int64(0)
				if rel, ok := insts[j].Args[0].(x86asm.Rel); ok {
					target = offsetOf(insts, j+1) + int64(rel)
				}
				k = indexAt(insts, target)
			}
			for ; k >= 0 && k < len(insts) && !isCharge(insts[k]); k++ {
				if c := insts[k]; c.Op == x86asm.CALL || c.Op == x86asm.RET || strings.HasPrefix(c.Op.String(), "J") {
					k = -1
					break
				}
			}
			if k < 0 || k == len(insts) {
				form, n = "check", 2
				break
			}
			form, n = "check, charge", 3
		default:
			// A compare of the count loaded into a register with the
			// register that accumulates the charges.
			k := prev(i)
			if k < 0 || insts[k].Op != x86asm.MOV || !onCount(insts[k].Args[1]) {
				continue
			}
			loaded := insts[k].Args[0]
			acc := in.Args[0]
			if acc == loaded {
				acc = in.Args[1]
			}
			if !registerForm(k, acc) {
				continue
			}
			form, n = "register", 4
		}
		forms[form]++
		t.Logf("%s: %v; %v (%d instructions, +%d NOP)", form, in, insts[j], n, nops)
		// The slow path is out of line (toolchain/patches/go1.26/compile,
		// likelyadjustPatches): the fast path does not take the branch,
		// unless it is a loop's back edge.
		if rel, ok := insts[j].Args[0].(x86asm.Rel); ok && insts[j].Op != x86asm.JLE && rel > 0 {
			t.Errorf("%s: %v; %v: the fast path jumps over the slow path", form, in, insts[j])
		}
		if limit := 4; form != "flush, check" && n > limit || n > 6 {
			t.Errorf("%s: %d instructions", form, n)
		}
	}
	for _, f := range []string{"register", "flush, check"} {
		if forms[f] == 0 {
			t.Errorf("no check of the form %q in main.work (found %v)", f, forms)
		}
	}
	if forms["check"]+forms["check, charge"] == 0 {
		t.Errorf("no entry check in main.work (found %v)", forms)
	}
}

// countOperand returns a function that reports whether an operand is the
// goroutine's count, found in insts: the entry check compares it with zero.
func countOperand(insts []x86asm.Inst) func(x86asm.Arg) bool {
	disp := int64(-1)
	for _, in := range insts {
		if m, ok := in.Args[0].(x86asm.Mem); ok && in.Op == x86asm.CMP && m.Base == x86asm.R14 && m.Disp != 0x10 {
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
// it with the accumulator); the stock compiler's build, whose inliner
// costs kprof's code (a leaf's check calls the slow path) and inlines
// neither, counts exactly too.
func TestFoldedCharges(t *testing.T) {
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
				if onCount(in.Args[0]) {
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

// TestMergedCharges checks kprof's compiler patch that merges two charges
// in a row (toolchain/patches/go1.26/compile, kprofMergeCharges): in
// main.(*rng).below of testdata/progs/merges, the caller's charge before
// the call of draw, which the compiler inlines, and draw's entry charge
// were two additions of constants to the count one after the other; the
// patched compiler makes them one, inside draw's inlined body. Without the
// patch the function has two such pairs.
func TestMergedCharges(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("amd64 only")
	}
	kprofBin := buildKprof(t)
	bin := kprofBuild(t, kprofBin, "../../testdata/progs/merges", "-pkgs", "main")
	insts, addr := disassembleAt(t, bin, "main.(*rng).below")
	inlined := inlinedRanges(t, bin, "main.(*rng).draw")
	onCount := countOperand(insts)
	constCharge := func(in x86asm.Inst) bool {
		_, imm := in.Args[1].(x86asm.Imm)
		return (in.Op == x86asm.ADD || in.Op == x86asm.SUB) && onCount(in.Args[0]) && imm
	}
	pairs, inDraw, prev := 0, 0, -1
	for i, in := range insts {
		if in.Op == x86asm.NOP {
			continue
		}
		if constCharge(in) {
			if prev >= 0 && constCharge(insts[prev]) {
				pairs++
			}
			pc := addr + uint64(offsetOf(insts, i))
			if slices.ContainsFunc(inlined, func(r [2]uint64) bool { return r[0] <= pc && pc < r[1] }) {
				inDraw++
			}
		}
		prev = i
	}
	t.Logf("main.(*rng).below: %d pairs of constant charges in a row, %d charges in draw's inlined body", pairs, inDraw)
	if inDraw == 0 {
		t.Fatal("no charge of the count inside draw's inlined body: the program no longer has the shape this test is about")
	}
	if pairs != 0 {
		t.Errorf("main.(*rng).below adds constants to the count %d times right after another such addition: the charges were not merged", pairs)
	}
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
