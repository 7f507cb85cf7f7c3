// Package rewrite is kprof's instrumenter. For one Go package it builds the
// go/ssa form of the original source, weighs every SSA block, decides where
// the goroutine's instruction counter is decremented and where granularity
// checks go (paper §4–5), and writes edited source files that the Go compiler
// compiles in place of the originals. Package toolexec applies it inside an
// ordinary go build (the -toolexec driver); package toolchain owns the
// patches to the Go toolchain it relies on (kprof's compiler, the
// per-goroutine field in runtime.g).
//
// # What is counted (metric version 1)
//
// An instruction is one ssa.Instruction of the function as built by
// golang.org/x/tools/go/ssa from the original source with the default builder
// mode (no GlobalDebug; generic functions are built once, as generic bodies,
// and counted once whatever their type arguments). Every instruction kind
// counts 1 except:
//
//   - *ssa.Phi: a phi is a renaming at a block boundary, not an operation;
//   - *ssa.DebugRef: absent without GlobalDebug, excluded for safety.
//
// The weight of a block is the number of its counted instructions, or,
// under the cost metric (Options.Cost, kprof build -metric cost), the sum
// of their weights in a table of picoseconds (package cost; WeightBy).
// Checks, small leaves, quiet functions and MaxPath are decided on
// instruction counts under either metric (FuncPlan.Counts): only the
// amounts charged differ. Synthetic
// functions (package initializers, wrappers, bound and thunk functions,
// range-over-func machinery) and functions the compiler must not instrument
// (//go:nosplit, //go:norace, //go:systemstack, //go:nowritebarrier,
// //go:nowritebarrierrec, cgo-generated code) are not counted: like assembly
// and the runtime, they are the paper's "native code". Neither is package
// os/signal, whose goroutine the agent starts; nor the recover block go/ssa
// adds to functions with defer (it runs only after a recovered panic), nor
// the panics of iterators that misuse yield, nor package testing (the
// harness; kprof patches it to count benchmarks, see package toolchain), nor, in
// deterministic mode, packages sync, internal/sync, sync/atomic and
// internal/synctest (how often a lock spins is timing). The metric depends on
// the source, the kprof version and the x/tools version only — never on
// GOARCH, the machine or the load.
//
// # Where charges go
//
// Each SSA block is charged at a source "landing point" that executes exactly
// as often as the block: the start of the function body, a statement
// boundary, the start of a branch or clause body, or — where Go syntax has no
// statement boundary — an expression-level tick that returns true (loop
// conditions, operands of && and ||, case values). Loop headers of range
// loops and for-loop post statements are charged where control passes
// through them (body start and after the loop, minus breaks; end of body and
// before continue). Blocks with no source position take their weight from
// neighbouring blocks by flow conservation, or find their statement from
// where their predecessors leave. go/ssa gives a test of a constant
// (if debug, 6%4 > 2 as an operand of &&) no position; buildSSA recovers
// the constant's (consttests.go). Output.Approx lists any block
// whose weight could only be placed approximately. The plan checker
// (plancheck.go, Options.CheckPlans, on in the tests) verifies each plan's
// invariants as it is made: final checks where blocks return or panic,
// checks at loop headers and at entry (or exits that stand for it),
// flushes before calls, the MaxPath bound, and tables that agree. The
// counts themselves are checked by the end-to-end oracle (cmd/kprof,
// TestExactAgainstOracle), which compares every calling context's
// instructions and calls with go/ssa/interp's trace of each test program.
//
// Fewer charges: a charge is a read-modify-write of one word of the
// goroutine, and consecutive ones wait on each other through memory, so
// kprof removes charges from paths in two ways.
//
//   - A block's weight moves to a dominator that runs exactly as often
//     (every path from the dominator reaches the block, in the same loops,
//     in a function whose loops are all natural), when nothing between
//     them calls, starts or defers a function, or waits on a channel
//     (hoistWeights). Both then run equally often, so totals stay exact.
//   - A function whose blocks that call, wait or leave it are all charged
//     at statements adds its charges to a local variable, which the
//     compiler keeps in a register, and flushes it into the goroutine's
//     count before each call and wait and at each return and panic; its
//     checks compare the count with the variable (FuncPlan.Local).
//     kprof's compiler leaves the variable's values out of the limits of
//     its if-conversion (package toolchain, branchelimPatches): a branch that
//     the plain build turns into conditional moves stays one.
//   - In such a function, the operands of && and || in the condition of
//     an if, or of a for that no break leaves, are charged in the
//     branches when they are cheap and pure (the last one need only have
//     no effect): each branch retraces the evaluation knowing its outcome
//     and adds the weights of the operands that ran to the variable,
//     evaluating an operand again only where the outcome does not tell
//     (branchticks.go). Elsewhere an operand is charged by a tick in the
//     expression (counter.T), a subtraction from the count, which kprof's
//     compiler turns into an addition to the variable on the same terms
//     as a leaf's charges (next item).
//   - When kprof's compiler inlines a small leaf (one that checks only
//     where it returns, see below) into such a function's own code, or
//     into the code of a body inlined there that accumulates too, the
//     leaf's charges — its ticks and those of the leaves inlined into it
//     included — go to that function's (or body's) variable instead of the
//     count, and the leaf's check compares the count with the variable,
//     its slow path charging the variable first (kprofFold, kprofInlined
//     and KprofFoldLate in package toolchain, counter.SED's k): the leaf
//     is sampled as from the count. A call evaluated after the last flush
//     on its path (in a return statement's results or a panic's argument,
//     or after the check of a block that returns — inside an inlined body
//     a return is an assignment to its results and a jump) keeps the
//     leaf's charges in the count, and so does one that a call (but an
//     intrinsic) or a panic may follow before that flush (decided when the
//     inliner is done with the package, when what follows is known): a
//     panic unwinding the caller, runtime.Goexit or os.Exit would lose
//     them.
//
// All three are exact for every run in which no runtime error (a nil
// dereference, an index out of range) unwinds a frame: such an error
// leaves uncounted what the frame accumulated since its last flush, and
// counted a weight moved ahead of it that did not run. Explicit panics,
// panics of callees, runtime.Goexit and os.Exit come after a flush.
//
// # Checks
//
// A granularity check (`if counter <= 0 { sample }`) follows the charge of
// blocks that return or panic, and comes before the charge of blocks that
// head a loop and of the entry block (paper §5.2), and further checks are
// added so that no path runs more than MaxPath instructions without one.
// When the entry block returns with no check between its entry check and
// its final one, the two are one test of the count after the block's
// charge, whose slow path takes each in turn (counter.SED): the entry
// check fires only when the final one does. The paper also checks before calls, so that the caller's instructions
// are not sampled in the callee: here the callee's entry check, before its
// push, does that, and a callee that does not push leaves them to the
// caller's next check. A call of a function of the same package that
// checks on entry (not a small leaf) ends a path for MaxPath; other calls
// (another package's functions, interface methods, function values) are
// not known to check. Range-over-func bodies, which do not push, still
// check before their calls, nested range-over-func loops included. A
// return inside a range-over-func loop body leaves the function only after
// the iterators return: the function restores its stack depth in a
// deferred call, and the return's final checks, where the iterators' frames
// are still on the stack, sample with the stack cut at the function (or the
// enclosing loop body) whose instructions they charge (counter.SD). Leaf
// functions push their identifier onto the reified stack only when they
// sample (paper §5.1), and before a panic statement (the deferred calls it
// runs are called from the frames it unwinds). A small loop-free leaf
// (within SmallLeaf) that accumulates its charges in a local variable
// checks only where it returns or panics (FuncPlan.ExitEntry): one test of
// the count after it flushes all it ran, whose slow path (counter.SED)
// samples what the caller left pending in the caller's context, counts the
// call, then samples the leaf's own instructions with the leaf on top. So
// exact mode attributes every function its own instructions and calls,
// small leaves and the functions the compiler inlines included; sampled,
// a leaf takes its share where its check sees what its caller accumulated
// (the caller does not accumulate, or kprof's compiler folded the check,
// above, also inside an inlined body). (A leaf that
// charges inside expressions, whose ticks go to the count, or that waits
// checks on entry instead.) A call to a package
// that reaches no instrumented code but through the function and interface
// values it is passed (the runtime and its dependencies, such as math/bits
// or internal/bytealg, and the sync packages in deterministic mode:
// Options.Inert), passing none, does not make the caller a non-leaf: no
// sample can happen below it. A call to a quiet function (quietFuncs: a
// small leaf that cannot panic and calls nothing but inert packages that
// cannot stop it; one that calls a quiet function pushes, and is not
// quiet) does: the callee samples in its own name, above its caller. But
// it needs no check before it (the callee cannot stop the caller), and
// what the callee runs counts towards the caller's MaxPath; a
// range-over-func body, which does not push, checks before it. A function
// that accumulates flushes before it ("_kp = counter.CQ(_kp + n)",
// FuncPlan.QuietFlush): the callee's check compares the count alone, which
// without the flush would lack what the caller accumulated, so that the
// caller's own checks would always fire first and the callee would never
// be sampled. kprof's compiler drops that flush ("_kp = _kp + n") where
// every call it serves was inlined and folded into the accumulator (see
// "Where charges go": the folded check compares the count with it),
// kprofDropQuietFlushes in package toolchain. The quiet functions of a package are facts its importers plan
// with: kprof build adds them to the package's archive, where the compile
// steps of its importers read them (package toolexec, facts.go;
// strings.Compare in a comparison function). Neither does a call to
// an inert package, unless it may end the goroutine or keep it waiting
// (package runtime, the sync packages: mayStop). A function that is not a
// leaf but calls on some paths only pushes its identifier where the
// nearest block that dominates all its calls, and lies on no cycle,
// begins, not at entry (lazyPush); its checks tell from the stack's depth
// whether it has pushed. Such a function whose paths that never push are
// short (within SmallLeaf), loop-free and call nothing checks on entry only
// where it pushes (FuncPlan.LateEntry): nothing it ran is in the count yet
// there, so that check samples what its caller left pending, as an entry
// check would; its other paths are a small leaf's (a check where they
// return, which takes the entry check's part too and counts the call).
//
// kprof's compiler lays a check's slow path out of line (package toolchain,
// likelyadjustPatches and layoutPatches): the side of the branch that
// reaches a slow path of package counter is unlikely and laid out after the
// rest, the join where the fast path continues right after the check, so
// that the fast path falls through. It keeps the count and the stack's
// depth in registers between calls (kprofPromote, run with branchelimPatches):
// loaded at a function's entry and after each call, stored before each call
// and return, so that charges, checks, pushes and pops are register
// arithmetic, not read-modify-writes of the goroutine's g that wait on one
// another. (So a runtime error that unwinds a function, such as a nil
// dereference, leaves what it charged since its last call uncounted, as the
// accumulator above does; and a profile of a running program, which reads
// other goroutines' counts, sees what each stored at its last call.) The
// depth after a call is what it was before (a function that returns
// normally leaves it as it found it, see "Pops"), so that its values are
// one value plus constants; a push whose entry only slow paths
// read before the function pops (an inlined function whose calls were all
// inlined: cmp.Less in slices.IsSorted's loop) stores its entry in those
// slow paths instead of on the fast path (kprofElidePushes; it relates
// the depth's values before the compiler's dead-code pass frees reloads
// nothing uses, such as the one between two calls in a row). Where a
// check's slow path joins, the count's phi takes the fast path's value
// before its constant charges, so that an iteration's charges fold into
// one subtraction and the checks compare with constants, instead of a
// chain of dependent subtractions (kprofFoldCharges); and an accumulator's
// phi there takes the fast path's constant on the slow path's edge too,
// the count's phi the difference (only the count minus the accumulators
// means anything), so that no register carries it through the loop
// (kprofEvenAccumulators). A loop's weight that is taken back before it
// (a for statement's post statement, charged with each iteration's body,
// does not run before the first) is flushed there, not accumulated, so
// that the accumulator is zero on the loop's entry as on its back edges
// and the compiler folds it out of the loop's check (mergeLoops). Where
// it cannot (an address of the fields escapes, as in -race builds), it
// merges two constant charges in a row into one (rewriteAMD64Patches): a
// caller's charge before a call and the entry charge of the callee the
// compiler inlined there.
//
// # Pops
//
// A function that pushes its identifier at entry takes it off the stack
// where it returns by decrementing the depth (counter.Pop), so that it
// keeps no value live across its calls. That is exact because every
// function that returns normally leaves the depth as it found it: a
// panic unwinds frames without their pops, but the frame whose deferred
// call recovers has a defer statement, and functions with defer
// statements, like range-over-func bodies and the functions that hold
// them and the functions that push lazily, keep the depth at their entry
// and restore it (counter.R, in a deferred call for the first). Code that
// is not instrumented may recover too: with -pkgs every function restores
// its saved depth (Options.ExactPops).
//
// A return whose results call functions pops after they are evaluated:
// "return counter.PopRet1[T]{}.Of(f())" (Ret1 … Ret4 where the function
// restores a saved depth). Where a result is too big for the compiler to
// keep in registers (more than four words, or a struct of more than four
// fields), or there are more than four, the wrapper would copy it twice,
// each copy read back right after it is written; such a return assigns the
// function's results instead — kprof names them (_kq0, _kq1, …) if they
// have no names — then pops and returns: "{ _kq0 = f(); counter.Pop();
// return }" (emitNamedReturn).
//
// # Loops that clear memory
//
// A loop "for i := range a { a[i] = zero }" over an array or a slice
// variable, which the compiler makes one clear of memory, is charged
// after it in bulk: len(a) times the charge its body would get (its
// header's and its body's weights), with nothing in the body, which would
// keep the compiler from recognising it. The body runs exactly len(a)
// times, unless a nil pointer on the way to a stops it in the first
// iteration (a runtime error: that iteration's charge is then uncounted,
// see "Where charges go"); the loop is the one path that runs more than
// MaxPath instructions without a check, like a call of copy or clear.
//
// # Deterministic mode
//
// Unless kprof build gets -nondeterministic, the runtime patch removes the
// randomness Go injects into code kprof counts (details in package toolchain):
// the process seed is a constant and map hashing never uses AES (its
// availability differs between machines); runtime.rand, which seeds maps,
// starts their iteration and seeds hash/maphash, math/rand, sync.Map and
// unique, draws from a stream of the running goroutine, seeded when the
// goroutine is created by one draw from its creator's stream (a constant
// for goroutines made on g0 and for the runtime's own); select chooses
// among ready cases with the same stream (uniformly, so still fairly); and
// sync.Pool keeps items per goroutine instead of per P, dropping them when
// the goroutine exits and ageing them only at a runtime.GC the program
// asks for (poolFile); a goroutine starts with a clear FIPS service
// indicator (the runtime leaves a reused g's). None of this changes what a program may observe:
// the Go specification and the package documentation promise no order, no
// seed and no Pool hit. What stays nondeterministic: goroutines that race
// for shared work (who fills a cache, wins a channel or a CompareAndSwap),
// heap addresses when several Ps allocate, time, I/O and the environment,
// and the code paths chosen by the CPU's optional features (crypto's
// assembly or Go code: GODEBUG=cpu.all=off makes them a baseline CPU's).
package rewrite
