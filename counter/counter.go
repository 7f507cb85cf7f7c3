// Package counter is what instrumented code calls: the per-goroutine
// instruction counter and reified call stack (kept in a field kprof's
// runtime patch appends to runtime.g), and the sampling slow path that hands
// the stack to the agent (paper §3–4).
//
// The fast paths (C, D, DueK, T, TC, P, PushAt, R and the Ret helpers) are small
// enough for the compiler to inline: a charge is one subtraction from a
// field of the current g, a check one comparison and a branch to the
// out-of-line slow path S. A function that accumulates its charges in a
// local variable (package rewrite, "Where charges go") checks with DueK
// and flushes with C; its slow paths SK and SLK charge what it accumulated
// first. The package depends on the runtime only, so that every package
// outside the runtime can be instrumented; it is never itself
// instrumented.
//
// # Entry points
//
// The rewritten source calls these through the alias _kprof; their names
// are short because they appear at every block. n is a charge (the
// instructions of the blocks it stands for), self the running function's
// entry in its file's function table, d a depth saved at entry, k what a
// function accumulated in its local variable.
//
//	charges
//	  C(n)             charge n
//	  CQ(n) → 0        charge n, return 0: the flush before a quiet call, "_kp = CQ(_kp + n)",
//	                   which kprof's compiler drops where it folds the callees into _kp
//	  T(n)             charge n, return true: a tick inside an expression (&&, ||, for conditions)
//	  V(n, v)          charge n, return v: a tick on a switch case value
//	checks (a check tests the count; the slow path samples)
//	  Due()            a sample is due                     → S(self), SL(self) or SE(callee)
//	  D(n)             charge n, then Due (blocks that return or panic)
//	  DueK(k)          Due once k more are charged (functions that accumulate) → SK, SLK
//	  DueP()           Due and something counted since the last sample (a range-over-func body's return)
//	  TC, TCL (n, self)              T preceded by a check: S, or SL at a loop header
//	  TCW, TCLW (n, self, d)         TC, TCL in a function that pushes lazily (W names it)
//	  VC(n, self, v), VCW(n, self, d, v)  V preceded by a check
//	slow paths (out of line)
//	  S(self)          sample: the stack, self on top unless pushed
//	  SL(self)         S at a loop header or MaxPath check: no context change (exact mode takes none)
//	  SE(callee)       at a function's entry: what is pending is the caller's
//	  SED(k, callee, n, self)  SE then S, for a small leaf or an entry block that returns (k: see SED);
//	                           one call of the agent at granularity 0 (LeafSampler)
//	  SK(k, self), SLK(k, self)  S, SL after charging k
//	  SD(self, d)      S with the stack cut at depth d (returns inside range-over-func bodies)
//	the reified stack
//	  P(f) → d         push f, return the depth to restore
//	  Depth(), PushAt(d, f), W(self, d)  lazy push: read the depth at entry, push before the first call; W names self in a sample until then
//	  Pop(), Pop1(v), PopRet1…4{}.Of(…)   pop by count, after the results
//	  R(d), R1(d, v), Ret1…4(d).Of(…)      restore the depth d, after the results
//
// The agent side: Install (the agent), Off, Suspend and Resume, Record and
// the recorder (kprof test -bench), Executed (instructions so far), AtExit,
// FlushOthers and StopTheWorld (profiles of running programs), Alloc
// (memory outside the Go heap).
package counter

import (
	// state_kprof.go, compiled in place of state_plain.go in kprof builds,
	// uses the patched runtime: the go command must know the dependency.
	_ "runtime"
	"unsafe"
)

// Func identifies an instrumented function on the reified stack. Each
// instrumented file holds a static table of them; the stack holds their
// addresses.
type Func struct {
	Name string // pprof-style name, "pkg.(*T).M.func1"
	File string // import path / file base name
	Line int    // declaration line
}

// Agent is what the slow path calls (the paper's SamplingProfiler, Fig. 3).
// Package agent implements it; Install connects it.
type Agent interface {
	// Register is called on a goroutine's first check and returns the
	// number of instructions before its first sample.
	Register() int64
	// Sample processes a sample: stack[0] is the outermost function,
	// stack[len-1] the one running; n is the number of instructions the
	// goroutine executed since its previous sample (or registration).
	// Register and Sample return the number of instructions until the next
	// sample: 0 asks for a sample whenever the calling context may
	// change — at every function entry and return (exact mode; the
	// checks at loop headers and MaxPath checks then take none, see SL).
	// stack[:from] is known to be unchanged since the goroutine's previous
	// sample, as far as that sample's stack reached (kprof's counter passes
	// the depth below the running function at granularity 0, where every
	// entry and return samples, and 0 otherwise: an agent that caches the
	// path of the previous sample then compares from the bottom, the
	// paper's Fig. 9).
	// It returns the granularity until the next sample.
	Sample(stack []*Func, from int, n int64) int64
	// Exit is called when a goroutine ends, with the instructions it ran
	// since its last sample (paper §7.2 loses them; kprof does not).
	Exit(n int64)
}

var (
	agent       Agent
	callCounter CallCounter // agent, if it counts calls (asserted once, not per sample)
	exitClaimer ExitClaimer // agent, if it claims exiting goroutines' tails
	slotReuser  SlotReuser  // agent, if it reuses the slots of goroutines that ended
	leafSampler LeafSampler // agent, if it takes a small leaf's two samples in one call
	leafBatcher LeafBatcher // agent (a LeafSampler), if it takes a batch of a leaf's calls
	runBatcher  RunBatcher  // agent (a LeafBatcher), if it takes runs of entries and returns
)

// Install connects the agent. It must be called before any goroutine other
// than the calling one runs instrumented code (from an init function).
func Install(a Agent) {
	agent = a
	callCounter, _ = a.(CallCounter)
	exitClaimer, _ = a.(ExitClaimer)
	slotReuser, _ = a.(SlotReuser)
	leafSampler, _ = a.(LeafSampler)
	leafBatcher, _ = a.(LeafBatcher)
	runBatcher, _ = a.(RunBatcher)
	if callCounter == nil {
		leafSampler = nil // (its samples count calls)
	}
	if leafSampler == nil {
		leafBatcher = nil
	}
	if leafBatcher == nil {
		runBatcher = nil // (runs are kept as batches are)
	}
	// The installing goroutine (running package initialization) registers
	// at its next check; what it ran before is not profiled.
	s := st()
	endPeriod(s, 0)
	s.Known = false
	setGoexitHook(goexit)
}

// never is a granularity so large that no check fires: used when no agent
// is installed and while the agent itself runs.
const never = 1 << 62

// C charges n instructions.
func C(n int64) {
	st().Count -= n
}

// CQ charges n instructions and returns 0: "_kp = CQ(_kp + n)" flushes
// what a function accumulated before a call of a quiet function (package
// rewrite), so that the callee's check sees it. Where kprof's compiler
// inlines every callee the flush serves and folds its charges and check
// into the accumulator, it replaces the flush with "_kp = _kp + n".
func CQ(n int64) int64 {
	st().Count -= n
	return 0
}

// Due reports whether a sample is due. A check is "if Due() { S(…) }"
// followed by the block's charge C(n): on amd64 a compare with memory, a
// branch and a subtraction from memory, three instructions.
func Due() bool {
	return st().Count <= 0
}

// DueP reports whether a sample is due and something was counted since the
// last one: the check where a range-over-func body returns to its
// iterator, which may follow the body's final check.
func DueP() bool {
	s := st()
	return s.Count <= 0 && s.Count < s.Gran
}

// DueK reports whether a sample is due once k more instructions are
// charged: the check of a function that accumulates its charges in a local
// variable (package rewrite, "Where charges go") before it flushes them.
func DueK(k int64) bool {
	return st().Count <= k
}

// D charges n instructions and reports whether a sample is due: the check
// of blocks that return or panic, whose instructions must be sampled in
// their own function, not the caller's.
func D(n int64) bool {
	// Two reads of the field: a subtraction from memory and a compare with
	// memory, where one read would take a load, a subtraction, a store and
	// a test.
	st().Count -= n
	return st().Count <= 0
}

// T charges n instructions and returns true: a tick inside a boolean
// expression (loop condition, && / || operand).
func T(n int64) bool {
	st().Count -= n
	return true
}

// I returns 0, whatever the tick t returned: "[1]T{v}[I(tick)]" is a
// tick on a switch case value v of type T in a file below go1.18, where V
// cannot be instantiated. (A function literal called in place would do
// too, but would shift the numbers of the function's other literals,
// which runtime.Caller and stack traces show.) "V[T](I(tick), v)" is a
// tick evaluated before v's calls. Its result is an int64 so that neither
// needs a conversion whose type name a local may shadow.
func I(t bool) int64 { return 0 }

// TC is T preceded by a granularity check; self is the running function
// when it is a leaf, nil otherwise.
func TC(n int64, self *Func) bool {
	// st() again after the call: nothing derived from g stays live across
	// it, so the fast path spills no register.
	if st().Count <= 0 {
		S(self)
	}
	st().Count -= n
	return true
}

// TCL is TC at a loop header (a check that bounds time only, see SL).
func TCL(n int64, self *Func) bool {
	if st().Count <= 0 {
		SL(self)
	}
	st().Count -= n
	return true
}

// V charges n instructions and returns v: a tick on an expression switch's
// case value.
func V[X any](n int64, v X) X {
	st().Count -= n
	return v
}

// VC is V preceded by a granularity check.
func VC[X any](n int64, self *Func, v X) X {
	if st().Count <= 0 {
		S(self)
	}
	st().Count -= n
	return v
}

// TCW is TC in a function that pushes itself lazily (Depth, PushAt): d is
// the depth at its entry.
func TCW(n int64, self *Func, d int) bool {
	if st().Count <= 0 {
		S(W(self, d))
	}
	st().Count -= n
	return true
}

// TCLW is TCL in a function that pushes itself lazily.
func TCLW(n int64, self *Func, d int) bool {
	if st().Count <= 0 {
		SL(W(self, d))
	}
	st().Count -= n
	return true
}

// VCW is VC in a function that pushes itself lazily.
func VCW[X any](n int64, self *Func, d int, v X) X {
	if st().Count <= 0 {
		S(W(self, d))
	}
	st().Count -= n
	return v
}

// P pushes f on the reified stack and returns the depth to restore when
// the function returns.
func P(f *Func) int {
	// st() at each use, as in TC: the g pointer is then read from its
	// register at each use instead of being kept (and spilled) as a value.
	d := st().Depth
	if uint(d) < uint(len(st().Stack)) {
		st().Stack[d] = uintptr(unsafe.Pointer(f))
	}
	st().Depth = d + 1
	return d
}

// Depth returns the depth of the reified stack: a function that pushes
// itself lazily reads it at entry, and pushes with PushAt before its first
// call.
func Depth() int {
	return st().Depth
}

// PushAt pushes f at depth d, the depth at its function's entry: it may
// run more than once, and the stack is then the same.
func PushAt(d int, f *Func) {
	if uint(d) < uint(len(st().Stack)) {
		st().Stack[d] = uintptr(unsafe.Pointer(f))
	}
	st().Depth = d + 1
}

// W names the running function in a sample of a function that pushes
// itself lazily, d being the depth at its entry: nil if it has pushed
// itself (the stack is deeper than d), self if not.
func W(self *Func, d int) *Func {
	if st().Depth > d {
		return nil
	}
	return self
}

// Pop pops the running function off the reified stack on the way out: a
// function that restores the depth by count (package rewrite, "Pops"),
// which keeps no depth to restore.
func Pop() {
	if costBuild {
		chargedOnTop()
	}
	st().Depth--
}

// Pop1 pops after the result v has been evaluated.
func Pop1[A any](v A) A {
	if costBuild {
		chargedOnTop()
	}
	st().Depth--
	return v
}

// PopRet1 … PopRet4 pop after a return statement's results are evaluated:
// return counter.PopRet2[int, error]{}.Of(f()).
type (
	PopRet1[A any]          struct{}
	PopRet2[A, B any]       struct{}
	PopRet3[A, B, C any]    struct{}
	PopRet4[A, B, C, D any] struct{}
)

func (PopRet1[A]) Of(a A) A {
	if costBuild {
		chargedOnTop()
	}
	st().Depth--
	return a
}

func (PopRet2[A, B]) Of(a A, b B) (A, B) {
	if costBuild {
		chargedOnTop()
	}
	st().Depth--
	return a, b
}

func (PopRet3[A, B, C]) Of(a A, b B, c C) (A, B, C) {
	if costBuild {
		chargedOnTop()
	}
	st().Depth--
	return a, b, c
}

func (PopRet4[A, B, C, D]) Of(a A, b B, c C, e D) (A, B, C, D) {
	if costBuild {
		chargedOnTop()
	}
	st().Depth--
	return a, b, c, e
}

// charged samples, in a build whose metric is cost (costBuild), what the
// runtime charged the running function after its final check, on its way
// out: the allocations of the calls and builtins that follow the check of
// the block that returns (a callee kprof does not count, append's growth,
// a string's concatenation). Without it they were sampled in the caller's
// next sample, or at exit in the goroutine's last. d is the depth at the
// function's entry: a function that pushes itself lazily and has not
// pushed (the depth is d) is not on the stack, and what the runtime
// charged it goes to its caller, as before.
//
// In sampling mode a count below 0 is due, and since the final check took
// what was due then, it became due after it. At granularity 0 (exact
// mode) a count below 0 is what is pending since the last sample, unless
// the counter keeps samples from the agent (state.Dirty < 0: a batch, a
// waiting entry, a run), whose instructions are pending too: there it
// cannot tell, and leaves the charges to the next sample, as before.
func charged(d int) {
	if st().Depth > d {
		chargedOnTop()
	}
}

// chargedOnTop is charged for a function known to be on the stack: one
// that pushed itself at entry and pops by count (Pop, Pop1, PopRet1 …
// PopRet4), whose depth at entry is one below the depth, a compare the
// compiler cannot drop (the subtraction may wrap).
func chargedOnTop() {
	if s := st(); s.Count < 0 && (s.Gran != 0 || s.Dirty >= 0) {
		S(nil)
	}
}

// R restores the stack depth d on the way out of a function.
func R(d int) {
	if costBuild {
		charged(d)
	}
	st().Depth = d
}

// R1 restores the stack depth after the result v has been evaluated.
func R1[A any](d int, v A) A {
	if costBuild {
		charged(d)
	}
	st().Depth = d
	return v
}

// Ret1 … Ret4 restore the stack depth after a return statement's results
// (any of which may call functions) are evaluated:
// return counter.Ret2[int, error](d).Of(f()).
type (
	Ret1[A any]          int
	Ret2[A, B any]       int
	Ret3[A, B, C any]    int
	Ret4[A, B, C, D any] int
)

func (d Ret1[A]) Of(a A) A {
	if costBuild {
		charged(int(d))
	}
	st().Depth = int(d)
	return a
}

func (d Ret2[A, B]) Of(a A, b B) (A, B) {
	if costBuild {
		charged(int(d))
	}
	st().Depth = int(d)
	return a, b
}

func (d Ret3[A, B, C]) Of(a A, b B, c C) (A, B, C) {
	if costBuild {
		charged(int(d))
	}
	st().Depth = int(d)
	return a, b, c
}

func (d Ret4[A, B, C, D]) Of(a A, b B, c C, e D) (A, B, C, D) {
	if costBuild {
		charged(int(d))
	}
	st().Depth = int(d)
	return a, b, c, e
}
