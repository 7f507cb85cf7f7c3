package toolchain

// go126 is the patch set for Go 1.26.
var go126 = &Release{
	Name: "go1.26",
	Dirs: []string{"go1.26"},
	Compiler: map[string][]Edit{
		"inline/inl.go":                     inlinerPatches,
		"ssagen/ssa.go":                     ssagenPatches,
		"inline/interleaved/interleaved.go": interleavedPatches,
		"ssa/regalloc.go":                   regallocPatches,
		"ssa/branchelim.go":                 branchelimPatches,
		"ssa/fuse_comparisons.go":           fuseComparisonsPatches,
		"ssa/rewritegeneric.go":             rewritegenericPatches,
		"ssa/likelyadjust.go":               likelyadjustPatches,
		"ssa/layout.go":                     layoutPatches,
		"ssa/rewriteAMD64.go":               rewriteAMD64Patches,
	},
	Packages: map[string]*PackagePatch{
		"runtime": {
			Edits:  runtimeEdits,
			Fields: map[string]Field{"runtime2.go": {"g", "kprof KprofGState"}},
		},
		"sync": {Edits: map[string][]Edit{"pool.go": syncEdits}},
		// os/signal counts the subscriptions each signal goes to
		// (patches/go1.26/os/signal), for the agent's watcher of SIGINT
		// and SIGTERM.
		"os/signal": {Edits: map[string][]Edit{"signal.go": {
			{"\tdefer handlers.Unlock()\n\n\tfor c, h := range handlers.m {\n", "\tdefer handlers.Unlock(); kprofCount(n)\n\n\tfor c, h := range handlers.m {\n"},
		}}},
		"testing": {
			Edits:  map[string][]Edit{"benchmark.go": testingEdits},
			Fields: map[string]Field{"benchmark.go": {"B", "kprof kprofBench"}},
			ReplaceAll: map[string][]Edit{"benchmark.go": {
				{"highPrecisionTimeNow()", "kprofTimeNow()"},
				{"highPrecisionTimeSince(", "kprofTimeSince("},
			}},
		},
	},
}

// syncEdits make sync.Pool deterministic (patches/go1.26/sync): Put and
// Get keep a goroutine's items in the runtime's g.
var syncEdits = []Edit{
	{"func (p *Pool) Put(x any) {\n", "func (p *Pool) Put(x any) { if kprofDetPool { kprofPut(p, x); return }\n"},
	{"func (p *Pool) Get() any {\n", "func (p *Pool) Get() any { if kprofDetPool { return kprofGet(p) }\n"},
}

// testingEdits make every benchmark result carry the exact instructions/op
// metric, counted while the benchmark timer runs, and the benchmark header
// declare the metric exact for benchstat. Every edit keeps the line count,
// so that positions in package testing stay those of its source.
var testingEdits = []Edit{
	{"\t\tb.timerOn = true\n", "\t\tb.timerOn = true; b.kprof.start = kprofMark(); kprofRecord(true)\n"},
	// Marks come after starting the clock and before stopping it
	// (package time is instrumented).
	{"\t\tb.duration += highPrecisionTimeSince(b.start)\n", "\t\tkprofRecord(false); b.kprof.count += kprofMark() - b.kprof.start; b.duration += highPrecisionTimeSince(b.start)\n"},
	{"\t\tb.start = highPrecisionTimeNow()\n\t}\n\tb.duration = 0\n",
		"\t\tb.start = highPrecisionTimeNow(); b.kprof.start = kprofMark()\n\t}\n\tb.duration = 0; b.kprof.count = 0; kprofResetRecord()\n"},
	{"\tb.StopTimer()\n\tb.previousN = n\n",
		"\tb.StopTimer(); if n == 1 && !b.kprof.haveFirst { b.kprof.first, b.kprof.haveFirst, b.kprof.procs = b.kprof.count, true, runtime.GOMAXPROCS(0) }\n\tb.previousN = n\n"},
	// go test -cpu runs the first benchmark of each -cpu list after
	// one run at the default GOMAXPROCS: the first run is made again.
	{"\tif b.loop.n == 0 {\n\t\t// Run the benchmark for at least the specified amount of time.\n",
		"\tif b.loop.n == 0 && b.kprof.haveFirst && b.kprof.procs != runtime.GOMAXPROCS(0) { b.kprof.haveFirst = false; b.runN(1) }; if b.loop.n == 0 {\n\t\t// Run the benchmark for at least the specified amount of time.\n"},
	{"\tb.result = BenchmarkResult{", "\tb.kprofReport(); b.result = BenchmarkResult{"},
	{"\t\t\tdefer wg.Done()\n", "\t\t\tdefer kprofDone(&wg)\n"},
	{"\twg.Wait()\n", "\tkprofWait(&wg)\n"},
	{"pb.globalN.Add(pb.grain)", "kprofAdd(pb.globalN, pb.grain)"},
	// RunParallel gives each goroutine a fixed share of b.N (kprofSplit)
	// instead of grains taken from a shared counter as they come: which
	// goroutine ran how many iterations, and so what each one set up
	// lazily, no longer depends on timing.
	{"\tnumProcs := b.parallelism * runtime.GOMAXPROCS(0)\n", "\tnumProcs := b.parallelism * runtime.GOMAXPROCS(0); kprofShares := kprofSplit(b.N, numProcs); _ = &n\n"},
	{"\t\t\t\tglobalN: &n,\n\t\t\t\tgrain:   grain,\n\t\t\t\tbN:      uint64(b.N),\n",
		"\t\t\t\tglobalN: &kprofShares[p].n,\n\t\t\t\tgrain:   kprofShares[p].grain,\n\t\t\t\tbN:      kprofShares[p].bN,\n"},
	{"\tif n.Load() <= uint64(b.N) && !b.Failed() {\n", "\tif kprofUnfinished(kprofShares) && !b.Failed() {\n"},
	{"\t\t\tfmt.Fprintf(b.w, \"cpu: %s\\n\", cpu)\n\t\t}\n",
		"\t\t\tfmt.Fprintf(b.w, \"cpu: %s\\n\", cpu)\n\t\t}; fmt.Fprintf(b.w, \"Unit %s assume=exact\\n\", kprofUnit())\n"},
}

// BenchUnit is the benchmark metric kprof's testing patch adds to every
// benchmark result; BenchUnitCost under the cost metric (kprof test
// -metric cost): the estimated nanoseconds per operation, exact and
// deterministic like instructions/op.
const (
	BenchUnit     = "instructions/op"
	BenchUnitCost = "ns/op-est"
)

// runtimeEdits are the edits to package runtime to the runtime's files. Every edit keeps
// the line count, so that positions in the runtime stay those of its
// source. The deterministic-mode ones are guarded by kprofDet.
var runtimeEdits = map[string][]Edit{
	"proc.go": {
		{"\nfunc goexit1() {\n", "\nfunc goexit1() { kprofGoexit()\n"},
		// A g is reused by later goroutines: under the race detector,
		// each one's kprof state happens after the previous owner's
		// (kprofGoexit releases it).
		{"\t\tnewg.raceignore = 0\n", "\t\tnewg.raceignore = 0; raceacquireg(newg, unsafe.Pointer(&newg.kprof))\n"},
		// A g is reused without clearing its FIPS service indicator,
		// which crypto code reads (RecordApproved sets it once): whether
		// a goroutine gets a fresh or a used g depends on the P.
		{"\tnewg.startpc = fn.fn\n", "\tnewg.startpc = fn.fn; newg.kprof.Rand = kprofSeed(callergp, newg); if kprofDet { newg.fipsIndicator = 0 }\n"},
	},
	"rand.go": {
		{"\tglobalRand.state.Init(*seed)\n", "\tif kprofDet { for i := range seed { seed[i] = byte(i) ^ 0x6b } }; globalRand.state.Init(*seed)\n"},
		{"func rand() uint64 {\n", "func rand() uint64 { if kprofDet { if x, ok := kprofUserRand(); ok { return x } }\n"},
	},
	"alg.go": {
		{"func alginit() {\n", "func alginit() { if kprofDet { for i := range hashkey { hashkey[i] = uintptr(bootstrapRand()) }; return }\n"},
	},
	"select.go": {
		{"\t\tj := cheaprandn(uint32(norder + 1))\n", "\t\tj := kprofSelectn(uint32(norder + 1))\n"},
	},
	"mgc.go": {
		{"\tclearpools()\n", "\tclearpools(); if kprofDet && trigger.kind == gcTriggerCycle { kprofPoolGC() }\n"},
	},
	// The cost metric charges append's growth (kprofGrow): every entry
	// the compiler calls for append, for its caller's code; and the bytes
	// of the slices make allocates on the heap (kprofBytes).
	"slice.go": {
		{"\treturn mallocgc(mem, et, true)\n", "\tkprofBytes(sys.GetCallerPC(), mem); return mallocgc(mem, et, true)\n"},
		{"\treturn makeslice(et, len, cap)\n", "\tp := makeslice(et, len, cap); kprofBytes(sys.GetCallerPC(), uintptr(cap)*et.Size_); return p\n"},
		{"\tmemmove(to, from, copymem)\n\n\treturn to\n", "\tmemmove(to, from, copymem); kprofBytes(sys.GetCallerPC(), tomem)\n\n\treturn to\n"},
		// strings.Builder's and bytes' growth (internal/bytealg.MakeNoZero).
		{"\treturn unsafe.Slice((*byte)(mallocgc(cap, nil, false)), cap)[:len]\n", "\tkprofBytes(sys.GetCallerPC(), cap); return unsafe.Slice((*byte)(mallocgc(cap, nil, false)), cap)[:len]\n"},
		// A slice appended in a stack buffer that moves to the heap as
		// it escapes: a growth.
		{"\tnew := mallocgc(capmem, et, true)\n", "\tkprofGrowBytes(sys.GetCallerPC(), capmem); new := mallocgc(capmem, et, true)\n"},
		{"\tnew := mallocgc(capmem, nil, false)\n\tmemmove(new, old, capmem)\n", "\tkprofGrowBytes(sys.GetCallerPC(), capmem); new := mallocgc(capmem, nil, false)\n\tmemmove(new, old, capmem)\n"},
		{"\tnew := mallocgc(cap*et.Size_, et, true)\n", "\tkprofGrowBytes(sys.GetCallerPC(), cap*et.Size_); new := mallocgc(cap*et.Size_, et, true)\n"},
		{"\tnew := mallocgc(capmem, nil, false)\n\tmemmove(new, old, lenmem)\n", "\tkprofGrowBytes(sys.GetCallerPC(), capmem); new := mallocgc(capmem, nil, false)\n\tmemmove(new, old, lenmem)\n"},
		{"\treturn slice{p, newLen, newcap}\n}\n", "\tkprofGrow(sys.GetCallerPC(), newcap, et); return slice{p, newLen, newcap}\n}\n"},
		{"\ts := growslice(oldPtr, newLen, oldCap, num, et)\n", "\ts := growslice(oldPtr, newLen, oldCap, num, et); if oldPtr != s.array { kprofGrow(sys.GetCallerPC(), s.cap, et) }\n"},
		{"\t\treturn growslice(oldPtr, newLen, oldCap, num, et)\n", "\t\ts := growslice(oldPtr, newLen, oldCap, num, et); kprofGrow(sys.GetCallerPC(), s.cap, et); return s\n"},
		{"\ts := growsliceBuf(oldPtr, newLen, oldCap, num, et, bufPtr, bufLen)\n", "\ts := growsliceBuf(oldPtr, newLen, oldCap, num, et, bufPtr, bufLen); if s.array != bufPtr { kprofGrow(sys.GetCallerPC(), s.cap, et) }\n"},
	},
	// The bytes of string concatenations and conversions the runtime
	// puts on the heap (kprofBytes). concatstrings and concatbytes take
	// the return address of the code that concatenates: the compiler
	// calls them, or the concatstring2 … 5 (concatbyte2 … 5) that it
	// calls.
	"string.go": {
		{"func concatstrings(buf *tmpBuf, a []string) string {\n", "func concatstrings(buf *tmpBuf, a []string) string { return kprofConcatstrings(sys.GetCallerPC(), buf, a) }; func kprofConcatstrings(pc uintptr, buf *tmpBuf, a []string) string {\n"},
		{"\ts, b := rawstringtmp(buf, l)\n", "\ts, b := rawstringtmp(buf, l); if buf == nil || l > len(buf) { kprofBytes(pc, uintptr(l)) }\n"},
		{"\treturn concatstrings(buf, []string{a0, a1})\n", "\treturn kprofConcatstrings(sys.GetCallerPC(), buf, []string{a0, a1})\n"},
		{"\treturn concatstrings(buf, []string{a0, a1, a2})\n", "\treturn kprofConcatstrings(sys.GetCallerPC(), buf, []string{a0, a1, a2})\n"},
		{"\treturn concatstrings(buf, []string{a0, a1, a2, a3})\n", "\treturn kprofConcatstrings(sys.GetCallerPC(), buf, []string{a0, a1, a2, a3})\n"},
		{"\treturn concatstrings(buf, []string{a0, a1, a2, a3, a4})\n", "\treturn kprofConcatstrings(sys.GetCallerPC(), buf, []string{a0, a1, a2, a3, a4})\n"},
		{"func concatbytes(buf *tmpBuf, a []string) []byte {\n", "func concatbytes(buf *tmpBuf, a []string) []byte { return kprofConcatbytes(sys.GetCallerPC(), buf, a) }; func kprofConcatbytes(pc uintptr, buf *tmpBuf, a []string) []byte {\n"},
		{"\t\tb = rawbyteslice(l)\n", "\t\tb = rawbyteslice(l); kprofBytes(pc, uintptr(l))\n"},
		{"\treturn concatbytes(buf, []string{a0, a1})\n", "\treturn kprofConcatbytes(sys.GetCallerPC(), buf, []string{a0, a1})\n"},
		{"\treturn concatbytes(buf, []string{a0, a1, a2})\n", "\treturn kprofConcatbytes(sys.GetCallerPC(), buf, []string{a0, a1, a2})\n"},
		{"\treturn concatbytes(buf, []string{a0, a1, a2, a3})\n", "\treturn kprofConcatbytes(sys.GetCallerPC(), buf, []string{a0, a1, a2, a3})\n"},
		{"\treturn concatbytes(buf, []string{a0, a1, a2, a3, a4})\n", "\treturn kprofConcatbytes(sys.GetCallerPC(), buf, []string{a0, a1, a2, a3, a4})\n"},
		{"\t\tp = mallocgc(uintptr(n), nil, false)\n", "\t\tp = mallocgc(uintptr(n), nil, false); kprofBytes(sys.GetCallerPC(), uintptr(n))\n"},
		{"\t\tb = rawbyteslice(len(s))\n", "\t\tb = rawbyteslice(len(s)); kprofBytes(sys.GetCallerPC(), uintptr(len(s)))\n"},
		{"\t\ta = rawruneslice(n)\n", "\t\ta = rawruneslice(n); kprofBytes(sys.GetCallerPC(), uintptr(n)*4)\n"},
		{"\ts, b := rawstringtmp(buf, size1+3)\n", "\ts, b := rawstringtmp(buf, size1+3); if buf == nil || size1+3 > len(buf) { kprofBytes(sys.GetCallerPC(), uintptr(size1+3)) }\n"},
	},
	"panic.go": {
		{"\tpreprintpanics(&p)\n\n\tfatalpanic(&p)", "\tpreprintpanics(&p); kprofPanicExit()\n\n\tfatalpanic(&p)"},
		// A fatal error the program caused (concurrent map writes, an
		// unlock of an unlocked mutex): before fatal's printlock, which
		// holds a lock.
		{"func fatal(s string) {\n\tp := getg()._panic\n", "func fatal(s string) {\n\tkprofFatalExit(); p := getg()._panic\n"},
	},
}

// inlinerPatches are the edits to cmd/compile/internal/inline/inl.go: the
// inliner's cost visitor skips what kprof inserted — calls into package
// counter, the ifs around its checks, the stack-depth bookkeeping, the
// conditions and switches evaluated again only to choose a charge, kprof's
// variables — and costs only the user's code inside (case values, return
// results), so that a function is inlined where the plain build inlines it
// (TestInliningAsPlain).
var inlinerPatches = []Edit{
	{
		Old: "\n\tif base.Flag.LowerM > 2 {\n\t\tfmt.Printf(\"%v: After inlining %+v\\n\\n\", ir.Line(res), res)\n",
		New: "\n\tkprofFold(callerfn, n, res, parent)\n\tif base.Flag.LowerM > 2 {\n\t\tfmt.Printf(\"%v: After inlining %+v\\n\\n\", ir.Line(res), res)\n",
	},
	{
		Old: "\tbudget := inlineBigFunctionNodes\n",
		New: "\tbudget := inlineBigFunctionNodes + kprofNodes(fn)\n",
	},
	{
		Old: "\nopSwitch:\n\tswitch n.Op() {\n",
		New: "\n\tif user, ok := kprofInserted(n); ok {\n" +
			"\t\tir.Visit(n, func(x ir.Node) {\n\t\t\tif x, ok := x.(*ir.Name); ok && x.Class == ir.PAUTO {\n\t\t\t\tv.usedLocals.Add(x)\n\t\t\t}\n\t\t})\n" +
			"\t\tfor _, u := range user {\n\t\t\tif v.do(u) {\n\t\t\t\treturn true\n\t\t\t}\n\t\t}\n" +
			"\t\treturn false\n\t}\nopSwitch:\n\tswitch n.Op() {\n",
	},
}

// The compiler marks every inlined call with an inline mark: a
// zero-size pseudo-instruction that becomes a real NOP when no other
// instruction sits at the call's source position. The runtime needs a mark
// only for an inlined body that owns at least one instruction (its PC leads
// the traceback back to the caller); the marks of bodies with no
// instruction are left out of the function's inline tree anyway. kprof's
// fast paths inline through st() and runtime.KprofState, whose bodies
// compile to nothing (g is a register): without this patch most charges
// and checks carried a NOP, a fifth of kprof's overhead. The patch makes
// the marks of instructionless bodies zero-size, in every function, and
// moves the NOPs of inlined calls of package counter whose bodies have
// instructions (a check and its slow path) to the end of the function
// (kprofCounterMark).
var ssagenPatches = []Edit{
	{
		Old: "\t\t// Any unmatched inline marks now need to be added to the inlining tree (and will generate a nop instruction).\n\t\tfor _, p := range inlMarkList {\n\t\t\tif p.As != obj.ANOP {\n",
		New: "\t\tkprofUsed := kprofInlineIndexes(s.pp.Text, inlMarks)\n" +
			"\t\t// Any unmatched inline marks now need to be added to the inlining tree (and will generate a nop instruction).\n\t\tfor _, p := range inlMarkList {\n" +
			"\t\t\tif p.As != obj.ANOP && !kprofUsed[inlMarks[p]] {\n\t\t\t\tkprofZeroSize(p)\n\t\t\t}\n" +
			"\t\t\tif p.As != obj.ANOP && kprofCounterMark(inlMarks[p]) {\n\t\t\t\tnop := Arch.Ginsnop(s.pp)\n\t\t\t\tnop.Pos = p.Pos\n\t\t\t\tinlMarks[nop] = inlMarks[p]\n\t\t\t\tkprofZeroSize(p)\n\t\t\t\tp = nop\n\t\t\t}\n" +
			"\t\t\tif p.As != obj.ANOP {\n",
	},
}

// regallocPatches split the live ranges of values at the calls of the
// checks' slow paths (counter.SE, S, SED and SK, and sl, SL's). A call
// clobbers the registers, so the register allocator keeps a value that
// lives across one in its stack slot: it stores it once, where
// the store dominates all its reloads, and with a reload in the slow path
// right after a function's entry check (or a loop's), that is where the
// value is defined — on every call, or every iteration, on the fast path
// (float arguments in mtrt: stack-slot moves were 39 % of its extra
// instructions). Around these calls the patched allocator stores the live
// registers' values itself, in the slow path, to slots of their own, and
// reloads them into the same registers after it: the values stay in
// registers, and the allocator's own spills stay where the program's real
// calls need them. The collector and stack copying see the slots as any
// spill slot. Around S and SED (returns and other checks) since the
// checks of loops compare with memory (their slow path no longer shares
// the count's load): callgrind -n 1 (go run ./bench/overhead), own code,
// mtrt 1.175× → 1.144×, javac 1.534× → 1.508×, json 1.477× → 1.463×;
// exact mode, which samples at every return, json +0.6 %, mtrt -0.7 %.
var regallocPatches = []Edit{
	{
		Old: "\t\t\t// Dump any registers which will be clobbered\n\t\t\tif s.doClobber && v.Op.IsCall() {\n",
		New: "\t\t\tkprofSplit := kprofSlow(v)\n\t\t\tvar kprofSaved []kprofSave\n\t\t\tif kprofSplit {\n\t\t\t\tkprofSaved = s.kprofSaveRegs(v)\n\t\t\t}\n\t\t\t// Dump any registers which will be clobbered\n\t\t\tif s.doClobber && v.Op.IsCall() {\n",
	},
	{
		Old: "\t\t\tb.Values = append(b.Values, v)\n\t\t\ts.dropIfUnused(v)\n\t\t}\n",
		New: "\t\t\tb.Values = append(b.Values, v)\n\t\t\ts.dropIfUnused(v)\n\t\t\tif kprofSplit {\n\t\t\t\ts.kprofRestoreRegs(v, kprofSaved)\n\t\t\t}\n\t\t}\n",
	},
	{
		Old: "\t\t\tif opcodeTable[v.Op].call {\n\t\t\t\t// Function call clobbers all the registers but SP and SB.\n",
		New: "\t\t\tif opcodeTable[v.Op].call && !kprofSlow(v) {\n\t\t\t\t// Function call clobbers all the registers but SP and SB.\n",
	},
	{
		Old: "\t\t\t\tif opcodeTable[v.Op].call {\n\t\t\t\t\tif numCalls != nil {\n",
		New: "\t\t\t\tif opcodeTable[v.Op].call && !kprofSlow(v) {\n\t\t\t\t\tif numCalls != nil {\n",
	},
	{
		Old: "\tfor _, v := range b.Values {\n\t\tif opcodeTable[v.Op].call {\n\t\t\treturn true\n\t\t}\n\t}\n\treturn false\n}\n",
		New: "\tfor _, v := range b.Values {\n\t\tif opcodeTable[v.Op].call && !kprofSlow(v) {\n\t\t\treturn true\n\t\t}\n\t}\n\treturn false\n}\n",
	},
}

// branchelimPatches keep the compiler's if-conversion (branchelim.go) as
// it decides for the plain code: the values of kprof's accumulator (_kp:
// a charge in a branch, and its phi where the branches join) do not count
// against its limits. Without this, a diamond whose branches charge
// differently had one phi more than in the plain build, and a branch body
// one value more, and lost its conditional moves (the plain build of
// math/big's divWW turns "if r1 != 0 { qq++; r0 -= d }" into conditional
// moves; kprof's kept a branch, which mispredicted). kprof's own diamonds,
// a branch tick's retraced condition, become conditional moves too.
//
// The first edit runs kprofPromote (patches/go1.26/compile/ssa/kprof_promote.go)
// before the if-conversion: it keeps the fields of g that kprof's inlined
// counter code updates (the count, the stack's depth) in registers between
// calls, and its values join the accumulator's in the limits above.
var branchelimPatches = []Edit{
	{
		Old: "func branchelim(f *Func) {\n",
		New: "func branchelim(f *Func) {\n\tkpp := kprofPromote(f)\n",
	},
	{
		Old: "\tchange := true\n\tfor change {\n\t\tchange = false\n\t\tfor _, b := range f.Blocks {\n\t\t\tchange = elimIf(f, loadAddr, b) || elimIfElse(f, loadAddr, b) || change\n",
		New: "\tkp := kprofAccumulator(f, kpp)\n\tchange := true\n\tfor change {\n\t\tchange = false\n\t\tfor _, b := range f.Blocks {\n\t\t\tchange = elimIf(f, loadAddr, b, kp) || elimIfElse(f, loadAddr, b, kp) || change\n",
	},
	{
		Old: "func elimIf(f *Func, loadAddr *sparseSet, dom *Block) bool {\n",
		New: "func elimIf(f *Func, loadAddr *sparseSet, dom *Block, kp map[ID]bool) bool {\n",
	},
	{
		Old: "\tif len(simple.Values) > maxfuseinsts || !canSpeculativelyExecute(simple) {\n",
		New: "\tif len(simple.Values)-kprofIn(simple, kp) > maxfuseinsts || !canSpeculativelyExecute(simple) {\n",
	},
	{
		Old: "func elimIfElse(f *Func, loadAddr *sparseSet, b *Block) bool {\n",
		New: "func elimIfElse(f *Func, loadAddr *sparseSet, b *Block, kp map[ID]bool) bool {\n",
	},
	{
		Old: "\tif !isLeafPlain(yes) || len(yes.Values) > 1 || !canSpeculativelyExecute(yes) {\n",
		New: "\tif !isLeafPlain(yes) || len(yes.Values)-kprofIn(yes, kp) > 1 || !canSpeculativelyExecute(yes) {\n",
	},
	{
		Old: "\tif !isLeafPlain(no) || len(no.Values) > 1 || !canSpeculativelyExecute(no) {\n",
		New: "\tif !isLeafPlain(no) || len(no.Values)-kprofIn(no, kp) > 1 || !canSpeculativelyExecute(no) {\n",
	},
	{
		Old: "\tif !shouldElimIfElse(no, yes, post, f.Config.arch) {\n",
		New: "\tif !shouldElimIfElse(no, yes, post, f.Config.arch, kp) {\n",
	},
	{
		Old: "func shouldElimIfElse(no, yes, post *Block, arch string) bool {\n",
		New: "func shouldElimIfElse(no, yes, post *Block, arch string, kp map[ID]bool) bool {\n",
	},
	{
		Old: "\t\tfor _, v := range post.Values {\n\t\t\tif v.Op == OpPhi {\n\t\t\t\t// Each phi results in CondSelect",
		New: "\t\tfor _, v := range post.Values {\n\t\t\tif kp[v.ID] {\n\t\t\t\tcontinue\n\t\t\t}\n\t\t\tif v.Op == OpPhi {\n\t\t\t\t// Each phi results in CondSelect",
	},
}

// interleavedPatches run kprof's late fold (KprofFoldLate) when the
// inliner is done with a package or a function.
var interleavedPatches = []Edit{
	{
		Old: "\tfor _, fn := range typecheck.Target.Funcs {\n\t\tinlState[fn].unparenthesize()\n\t}\n",
		New: "\tfor _, fn := range typecheck.Target.Funcs {\n\t\tinlState[fn].unparenthesize()\n\t}\n\tinline.KprofFoldLate()\n",
	},
	{
		Old: "\t\ts.fixpoint()\n\t\ts.unparenthesize()\n",
		New: "\t\ts.fixpoint()\n\t\ts.unparenthesize()\n\t\tinline.KprofFoldLate()\n",
	},
}

// fuseComparisonsPatches mend a miscompile of Go 1.26's fuseComparisons
// (ssa/fuse_comparisons.go), which turns "if x || y" into "if x | y" when
// y's block can run speculatively, and so removes the edge from x's block
// to the successor both share, with its arguments of that successor's
// phis: when the phis took another value from x's block than from y's,
// every path then takes y's. Since Go 1.26 lets inlining markers run
// speculatively (go.dev/issue/74915), a function inlined into y that
// assigns a variable of the caller reaches this — stock Go 1.26.8
// compiles
//
//	x := i > 2 || (func() bool { n += 2; return true }() && i < -3)
//	if x { … }
//
// in a loop so that n += 2 runs whether or not i > 2 — and so do kprof's
// ticks folded into the accumulator (KprofFoldLate). The patch fuses only
// when the shared successor's phis agree on the two edges.
var fuseComparisonsPatches = []Edit{
	{
		Old: "\t\t// Logically combine the control values for p and b.\n",
		New: "\t\tif !kprofPhisAgree(p.Succs[i], b.Succs[i]) {\n\t\t\treturn false\n\t\t}\n\n\t\t// Logically combine the control values for p and b.\n",
	},
}

// rewritegenericPatches keep a charge of a constant and a variable
// together where it is subtracted from the count: D(_kp + 3), a final
// check in a function that accumulates its charges, is then one
// subtraction from memory of the sum (LEAQ, SUBQ to memory, where the
// generic rule "x - (z + c) => (x - z) - c" made it a load, two
// subtractions and a store). Only for loads from the goroutine's g, which
// only kprof's counter reads in a program.
var rewritegenericPatches = []Edit{
	{
		Old: "\t// match: (Sub64 x (Add64 z i:(Const64 <t>)))\n\t// cond: (z.Op != OpConst64 && x.Op != OpConst64)\n\t// result: (Sub64 (Sub64 <t> x z) i)\n\tfor {\n\t\tx := v_0\n\t\tif v_1.Op != OpAdd64 {\n\t\t\tbreak\n\t\t}\n\t\t_ = v_1.Args[1]\n\t\tv_1_0 := v_1.Args[0]\n\t\tv_1_1 := v_1.Args[1]\n\t\tfor _i0 := 0; _i0 <= 1; _i0, v_1_0, v_1_1 = _i0+1, v_1_1, v_1_0 {\n\t\t\tz := v_1_0\n\t\t\ti := v_1_1\n\t\t\tif i.Op != OpConst64 {\n\t\t\t\tcontinue\n\t\t\t}\n\t\t\tt := i.Type\n\t\t\tif !(z.Op != OpConst64 && x.Op != OpConst64) {\n",
		New: "\t// match: (Sub64 x (Add64 z i:(Const64 <t>)))\n\t// cond: (z.Op != OpConst64 && x.Op != OpConst64)\n\t// result: (Sub64 (Sub64 <t> x z) i)\n\tfor {\n\t\tx := v_0\n\t\tif v_1.Op != OpAdd64 {\n\t\t\tbreak\n\t\t}\n\t\t_ = v_1.Args[1]\n\t\tv_1_0 := v_1.Args[0]\n\t\tv_1_1 := v_1.Args[1]\n\t\tfor _i0 := 0; _i0 <= 1; _i0, v_1_0, v_1_1 = _i0+1, v_1_1, v_1_0 {\n\t\t\tz := v_1_0\n\t\t\ti := v_1_1\n\t\t\tif i.Op != OpConst64 {\n\t\t\t\tcontinue\n\t\t\t}\n\t\t\tt := i.Type\n\t\t\tif !(z.Op != OpConst64 && x.Op != OpConst64 && !kprofGLoad(x)) {\n",
	},
}

// likelyadjustPatches lay out the checks' fast paths as fall-throughs. The
// compiler guesses which side of a branch is likely from loops and calls;
// a check's two sides often tie (the code after the check calls too), and
// the layout then put the slow path right after the compare, so that every
// check's fast path was a taken jump over it. kprofLikely marks the side
// of a check that leads to a slow path of package counter unlikely, before
// the compiler's own guesses: the layout moves the slow path out of the
// way, and the fast path is a compare and a branch not taken.
var likelyadjustPatches = []Edit{
	{
		Old: "func likelyadjust(f *Func) {\n",
		New: "func likelyadjust(f *Func) {\n\tkprofLikely(f)\n",
	},
}

// layoutPatches move the checks' slow paths out of line. Marking a
// check's slow side unlikely (likelyadjustPatches) is not enough: the
// layout schedules every predecessor of a join before the join, so the
// slow path still came right after the check, its fast path still jumped
// over it. The patched layout defers the first block of a slow path
// (kprofCold) until no successor of a block laid out is left, and lays out
// the join after the check's fast side at once (kprofJoin): the slow paths
// go towards the end of the function, and a check's fast path falls
// through.
var layoutPatches = []Edit{
	{
		Old: "\t\t// Pick a zero-degree block if we can.\n\t\tfor len(zerodegree) > 0 {\n\t\t\t// Pop an element from the tail of the queue.\n\t\t\tcid := zerodegree[len(zerodegree)-1]\n\t\t\tzerodegree = zerodegree[:len(zerodegree)-1]\n\t\t\tif !scheduled[cid] {\n",
		New: "\t\t// Pick a zero-degree block if we can.\n\t\tfor len(zerodegree) > 0 {\n\t\t\t// Pop an element from the tail of the queue.\n\t\t\tcid := zerodegree[len(zerodegree)-1]\n\t\t\tzerodegree = zerodegree[:len(zerodegree)-1]\n\t\t\tif !scheduled[cid] && kprofCold(idToBlock[cid]) {\n\t\t\t\tkprofDeferred = append(kprofDeferred, cid)\n\t\t\t\tcontinue\n\t\t\t}\n\t\t\tif !scheduled[cid] {\n",
	},
	{
		Old: "\t\tif likely != nil && !scheduled[likely.ID] {\n\t\t\tbid = likely.ID\n\t\t\tcontinue\n\t\t}\n",
		New: "\t\tif likely != nil && !scheduled[likely.ID] {\n\t\t\tbid = likely.ID\n\t\t\tcontinue\n\t\t}\n\t\tif s := kprofJoin(b); s != nil && !scheduled[s.ID] {\n\t\t\tbid = s.ID\n\t\t\tcontinue\n\t\t}\n",
	},
	{
		Old: "\t\t// Still nothing, pick any non-exit block.\n",
		New: "\t\t// kprof: the checks' slow paths.\n\t\tfor len(kprofDeferred) > 0 {\n\t\t\tcid := kprofDeferred[0]\n\t\t\tkprofDeferred = kprofDeferred[1:]\n\t\t\tif !scheduled[cid] {\n\t\t\t\tbid = cid\n\t\t\t\tcontinue blockloop\n\t\t\t}\n\t\t}\n\t\t// Still nothing, pick any non-exit block.\n",
	},
	{
		Old: "\tvar zerodegree []ID\n",
		New: "\tvar zerodegree []ID\n\tvar kprofDeferred []ID // first blocks of slow paths (kprofCold), in the order met\n",
	},
}

// rewriteAMD64Patches merge two charges in a row into one: where a
// caller's charge before a call is followed by the entry charge of the
// callee the compiler inlined there (or by the flush of an inlined small
// leaf), two additions of constants to the count in memory, each waiting
// for the other's store, become one. Only for fields of the running
// goroutine's g (the count; two additions to one field of g, nothing
// reading memory between them, are one whoever reads the field).
var rewriteAMD64Patches = []Edit{
	{
		Old: "func rewriteValueAMD64_OpAMD64ADDQconstmodify(v *Value) bool {\n\tv_1 := v.Args[1]\n\tv_0 := v.Args[0]\n",
		New: "func rewriteValueAMD64_OpAMD64ADDQconstmodify(v *Value) bool {\n\tif kprofMergeCharges(v) {\n\t\treturn true\n\t}\n\tv_1 := v.Args[1]\n\tv_0 := v.Args[0]\n",
	},
}
