//go:build kprofpatch

// Code kprof adds to package runtime: the per-goroutine state and the exported accessors package counter uses.

package runtime

import (
	"internal/runtime/atomic"
	"internal/runtime/exithook"
	"internal/stringslite"
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
	Dirty   int            // 1 + the lowest stack index the last sample showed another entry at (counter.SD); 0: none; below 0: a batch of calls is kept (counter.SED)
	Local   unsafe.Pointer // the agent's per-goroutine state
	Done    int64          // instructions of periods that have ended (reported or not)
	Frozen  int64          // instructions executed when the agent was entered
	Rand    uint64         // deterministic mode: the goroutine's random stream
	Pool    [KprofPoolCap]KprofPoolItem
}

// Deterministic mode (kprof build without -nondeterministic) removes the
// randomness Go injects into code kprof counts; see package rewrite's
// documentation, "Deterministic mode".
//
// - The process seed is a constant, and hashing does not use AES (whose
//   availability differs between machines).
// - rand(), which seeds maps, starts map iteration, hashes NaNs and seeds
//   hash/maphash, math/rand and sync.Map, draws from a stream of the
//   running goroutine, seeded when it is created from its creator's stream
//   (goroutines the runtime creates from g0 start from a constant), so
//   that a goroutine's draws do not depend on what other goroutines did.
// - select picks among ready cases with the goroutine's stream: uniform,
//   so still fair.
// - sync.Pool keeps items per goroutine (KprofPoolCache) instead of per P,
//   and only a GC the program asks for (runtime.GC) ages them out.
// - A goroutine starts with a clear FIPS service indicator (a reused g
//   keeps its previous goroutine's, and crypto code reads it).

// KprofPoolCap is the number of sync.Pool items a goroutine keeps.
const KprofPoolCap = 8

// KprofPoolItem is an item a goroutine put in a sync.Pool.
type KprofPoolItem struct {
	Pool    unsafe.Pointer // the *sync.Pool
	X       any
	Private bool // the pool's private item (sync.Pool returns it first)
	Age     uint8
}

// KprofPoolCache returns the running goroutine's sync.Pool items.
func KprofPoolCache() *[KprofPoolCap]KprofPoolItem { return &getg().kprof.Pool }

// kprofPoolGC ages every goroutine's pool items at a GC the program asked
// for, as sync.Pool's victim cache does: an item survives one. The world
// is stopped.
func kprofPoolGC() {
	forEachG(func(gp *g) {
		c := &gp.kprof.Pool
		n := 0
		for _, it := range c {
			if it.Pool != nil && it.Age == 0 {
				it.Age = 1
				c[n] = it
				n++
			}
		}
		for i := n; i < len(c); i++ {
			c[i] = KprofPoolItem{}
		}
	})
}

// kprofRand steps a goroutine's random stream (SplitMix64).
//
//go:nosplit
func kprofRand(k *KprofGState) uint64 {
	k.Rand += 0x9e3779b97f4a7c15
	z := k.Rand
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// kprofUserRand draws from the running goroutine's stream; false on g0 and
// the signal stack (runtime-internal uses keep the M's stream).
//
//go:nosplit
func kprofUserRand() (uint64, bool) {
	gp := getg()
	if gp.m == nil || gp != gp.m.curg {
		return 0, false
	}
	return kprofRand(&gp.kprof), true
}

// kprofSeed is the first state of a new goroutine's stream: a draw from
// its creator's, or a constant for goroutines made on g0 and for the
// runtime's own (the GC's workers start from whichever goroutine
// triggers a collection: they must not draw from its stream).
func kprofSeed(creator, newg *g) uint64 {
	if creator != nil && creator.m != nil && creator == creator.m.curg && !isSystemGoroutine(newg, false) {
		return kprofRand(&creator.kprof)
	}
	return 0x6b70726f66 // "kprof"
}

// kprofSelectn picks a ready select case.
func kprofSelectn(n uint32) uint32 {
	if kprofDet {
		if x, ok := kprofUserRand(); ok {
			return uint32((uint64(uint32(x)) * uint64(n)) >> 32)
		}
	}
	return cheaprandn(n)
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

// KprofStopTheWorld stops every other goroutine, so that the caller may
// read their profiles, until KprofStartTheWorld. It
// reports false, and stops nothing, where the world cannot be stopped: on a
// system stack or with runtime locks held.
func KprofStopTheWorld() bool {
	gp := getg()
	if gp.m == nil || gp != gp.m.curg || gp.m.locks != 0 || gp.m.mallocing != 0 {
		return false
	}
	kprofWorld = stopTheWorld(stwReadMemStats)
	return true
}

var kprofWorld worldStop

// KprofStartTheWorld ends KprofStopTheWorld.
func KprofStartTheWorld() { startTheWorld(kprofWorld) }

// KprofSetGoexitHook sets the function every goroutine calls as it exits.
func KprofSetGoexitHook(f func()) { kprofGoexitHook = f }

// KprofGo runs f on a new goroutine of the runtime's own kind: started
// here, in package runtime, it is a system goroutine (isSystemGoroutine),
// which NumGoroutine, Stack of all goroutines, the goroutine profile and
// the deadlock check leave out, as they leave out the runtime's own. The
// agent's helpers (its signal watcher) are not the program's goroutines,
// and must not show up in its goroutine-leak checks. (Not inlined: the
// goroutine's function must be this closure of package runtime.)
//
//go:noinline
func KprofGo(f func()) {
	go func() { f() }()
}

// kprofSigDelivered holds, by signal number, the number of channels
// os/signal delivered the signal to last (kprofSignalDelivered).
var kprofSigDelivered [_NSIG]uint32

// kprofSignalDelivered is called by kprof's patch of os/signal when it
// delivers signal s to n channels (signal.Notify's), before it sends.
//
//go:linkname kprofSignalDelivered os/signal.kprofDelivered
func kprofSignalDelivered(s uint32, n int32) {
	if s < uint32(len(kprofSigDelivered)) {
		atomic.Store(&kprofSigDelivered[s], uint32(n))
	}
}

// KprofSignalDelivered returns the number of channels os/signal delivered
// signal s to last, the agent's included: a receiver of s reads the
// count of its delivery or a later one's.
func KprofSignalDelivered(s uint32) int {
	if s < uint32(len(kprofSigDelivered)) {
		return int(atomic.Load(&kprofSigDelivered[s]))
	}
	return 0
}

// KprofYield lets other goroutines run while the caller waits for one of
// them (the agent's spinlock): Gosched, or, where the goroutine may not be
// rescheduled — it holds its P pinned (sync.Pool's procPin, instrumented
// in a -nondeterministic build) or another runtime lock —, a yield of the
// OS thread, the holder running on another P.
func KprofYield() {
	if mp := getg().m; mp != nil && mp.locks == 0 {
		Gosched()
		return
	}
	osyield()
}

// KprofAddExitHook runs f when the program exits: main returns, os.Exit,
// or a panic that nothing recovered (kprofPanicExit).
func KprofAddExitHook(f func()) {
	exithook.Add(exithook.Hook{F: f, RunOnFailure: true})
	kprofPanicHooks = append(kprofPanicHooks, f)
}

var (
	kprofPanicHooks []func()
	kprofPanicRan   atomic.Uint32
)

// kprofPanicExit runs kprof's exit hooks when a panic that nothing
// recovered is about to end the program (gopanic, after preprintpanics
// ran the values' Error and String methods): the profile of a crashing
// program, or of a test binary whose test panicked, is written as at
// exit. Not from a goroutine that holds runtime locks or allocates, and
// once: a hook that panics in turn ends the program without them. The
// other exit hooks (coverage's) do not run on a panic, as without kprof.
func kprofPanicExit() {
	if !kprofMayExit() || !kprofPanicRan.CompareAndSwap(0, 1) {
		return
	}
	// While the hooks write the profile, the program goes on: counted
	// as panicking, so that a main that returns meanwhile waits for the
	// crash (runtime.main parks) instead of exiting with status 0.
	panicking.Add(1)
	for _, f := range kprofPanicHooks {
		f()
	}
	panicking.Add(-1)
}

// kprofMayExit reports whether the calling goroutine may run the exit
// hooks: a user goroutine, not the system stack, holding no runtime lock.
//
//go:nosplit
func kprofMayExit() bool {
	gp := getg()
	return gp.m != nil && gp == gp.m.curg && gp.m.locks == 0 && gp.m.mallocing == 0
}

// kprofFatalExit is kprofPanicExit for fatal, which is nosplit and may run
// where the stack must not grow: the hooks run only from a goroutine that
// may run them, whose stack may grow (fatal errors the runtime finds with
// a lock held, such as a deadlock, write no profile).
//
//go:nosplit
func kprofFatalExit() {
	if kprofMayExit() {
		kprofPanicExit()
	}
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

// KprofClaimPending ends the running goroutine's period and returns the
// instructions it counted in it. KprofForEachOther claims other
// goroutines' periods under the same lock: an exiting goroutine's tail is
// reported once, by whichever comes first.
func KprofClaimPending() int64 {
	k := &getg().kprof
	lock(&allglock)
	n := k.Gran - k.Count
	k.Done += n
	k.Count = k.Gran
	unlock(&allglock)
	return n
}

// kprofMinStack is the length of a goroutine's stack buffer at its start.
const kprofMinStack = 64

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
	k.Count, k.Gran, k.Depth, k.InAgent, k.Known, k.Local, k.Done, k.Dirty = 0, 0, 0, false, false, nil, 0, 0
	k.Pool = [KprofPoolCap]KprofPoolItem{}
	// The stack buffer stays with the g, at the length a new g's has
	// (package counter's minStack): a push beyond the buffer is lost
	// until a sample grows it, and what a goroutine loses must not
	// depend on the g it runs on (a deep recursion's sampled profile
	// differed from run to run: go-toml's tests).
	if len(k.Stack) > kprofMinStack {
		k.Stack = k.Stack[:kprofMinStack]
	}
	unlock(&allglock)
	if raceenabled {
		racereleasemergeg(gp, unsafe.Pointer(k))
	}
}

// The cost metric charges the allocations whose size only the runtime
// knows where it makes them (kprof build -metric cost; package cost,
// "Run-time charges"): append's growth, by the new capacity, and a slice
// that moves from a stack buffer to the heap (kprofGrow, kprofGrowBytes);
// and the bytes of make([]T, n), of internal/bytealg.MakeNoZero
// (strings.Builder's growth), of string concatenations and of conversions
// between strings and byte or rune slices, where they go to the heap
// (kprofBytes). Charged to the goroutine that allocates, where the code
// that allocates is neither package runtime's (its own allocations, on
// the goroutines that call it, depend on scheduling: the timers of a P)
// nor package counter's (its stack buffer's growth), so the program's
// counts stay deterministic; the packages kprof does not count are
// charged (internal/runtime/maps as a map grows, a package -pkgs leaves
// out): their allocations go to the counted code that called them.
var (
	kprofGrowObj  int64 // ps per growth; 0 with kprofGrowByte: not charged
	kprofGrowByte int64 // ps per byte of a growth's new capacity, or of an allocation
)

// KprofSetGrowth sets what a slice's growth and the bytes of the
// allocations the runtime sizes weigh (package counter, in cost builds,
// before any instrumented code runs).
func KprofSetGrowth(obj, perByte int64) { kprofGrowObj, kprofGrowByte = obj, perByte }

// kprofChargeCallers caches whether the caller of an allocation is
// charged (kprofChargedCaller): pc<<1 | charged, one word per entry, so
// that racing writers leave an entry whole (a text address has its top
// bit clear on every platform Go runs on).
var kprofChargeCallers [256]uintptr

// kprofGrow charges the running goroutine a growth to capacity c of
// elements of et, made for the code at return address pc.
func kprofGrow(pc uintptr, c int, et *_type) { kprofGrowBytes(pc, uintptr(c)*et.Size_) }

// kprofGrowBytes charges the running goroutine a growth to n bytes (or a
// move of a slice from a stack buffer to the heap), made for the code at
// return address pc.
func kprofGrowBytes(pc, n uintptr) {
	if kprofGrowObj != 0 || kprofGrowByte != 0 {
		kprofCharge(pc, kprofGrowObj+int64(n)*kprofGrowByte)
	}
}

// kprofBytes charges the running goroutine n bytes allocated on the heap
// for the code at return address pc.
func kprofBytes(pc, n uintptr) {
	if kprofGrowByte != 0 && n != 0 {
		kprofCharge(pc, int64(n)*kprofGrowByte)
	}
}

// kprofCharge charges the running goroutine w for the code at return
// address pc, unless that code is package runtime's or counter's.
func kprofCharge(pc uintptr, w int64) {
	gp := getg()
	if gp.m == nil || gp != gp.m.curg || gp.kprof.InAgent || !gp.kprof.Known || !kprofChargedCaller(pc) {
		return
	}
	gp.kprof.Count -= w
}

// kprofChargedCaller reports whether the function at pc is neither the
// runtime's nor package counter's.
func kprofChargedCaller(pc uintptr) bool {
	e := &kprofChargeCallers[(pc>>2)%uintptr(len(kprofChargeCallers))]
	if w := atomic.Loaduintptr(e); w>>1 == pc && w != 0 {
		return w&1 != 0
	}
	f := findfunc(pc)
	name := funcname(f)
	out := f.valid() && !stringslite.HasPrefix(name, "runtime.") && !stringslite.HasPrefix(name, "github.com/kprof/kprof/counter.")
	w := pc << 1
	if out {
		w |= 1
	}
	atomic.Storeuintptr(e, w)
	return out
}
