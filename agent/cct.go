package agent

import (
	"fmt"
	"math/bits"
	"runtime"
	"sync/atomic"
	"unsafe"

	"github.com/kprof/kprof/counter"
	"github.com/kprof/kprof/overlap"
)

// Settings configure the built-in agents.
type Settings struct {
	Mode        string // overlap.ModeSample or overlap.ModeExact
	Granularity int64  // g
	Jitter      int64  // R: granularities are g + r, r uniform in [0, R)
	Seed        uint64 // seed of every goroutine's PRNG
	// VerifyPaths checks, at every sample, the part of the stack the
	// counter reports unchanged against the cached path, and panics if it
	// changed: kprof's tests set it (KPROF_VERIFY_PATHS=1).
	VerifyPaths bool
}

// The agent's trees live outside the Go heap (counter.Alloc): sampling
// allocates nothing the program could observe (testing.AllocsPerRun, GC
// pacing), which also keeps runs reproducible. Off-heap records hold only
// pointers to other off-heap records and to the static Func tables.

// node is one calling context of a goroutine's tree; its children form a
// linked list (few children per context; the path cache avoids most walks).
type node struct {
	fn      *Func
	samples int64
	instr   int64
	calls   int64 // exact mode: calls that entered this context
	// The same, while recording (Record): a benchmark's timed part.
	rsamples, rinstr, rcalls int64
	child                    *node // first child
	next                     *node // next sibling
	parent                   *node
}

// arena hands out nodes from off-heap chunks.
type arena struct {
	free []node
}

const chunk = 256

func (a *arena) new(f *Func) *node {
	if len(a.free) == 0 {
		a.free = unsafe.Slice((*node)(counter.Alloc(chunk*unsafe.Sizeof(node{}))), chunk)
	}
	n := &a.free[0]
	a.free = a.free[1:]
	n.fn = f
	return n
}

func (n *node) childOf(f *Func, a *arena) *node {
	for c := n.child; c != nil; c = c.next {
		if c.fn == f {
			return c
		}
	}
	c := a.new(f)
	c.next = n.child
	c.parent = n
	n.child = c
	return c
}

// gstate is one goroutine's samples. Only its goroutine writes it, with
// busy set; another goroutine reads it holding CCT.mu, with the world
// stopped (counter.StopTheWorld) and no goroutine busy (see stopped). An
// atomic lock here would cost more than the rest of an exact-mode sample.
type gstate struct {
	busy   bool
	verify bool // Settings.VerifyPaths
	root   node
	path   []*node // path cache (paper Fig. 9): path[i] is the node of stack[:i+1]
	// fns[i] is path[i].fn: a sample compares its stack with the cached
	// path here, without loading the nodes.
	fns   []*Func
	rng   uint64
	total int64 // instructions this goroutine ran, exactly
	nsamp int64
	// rtotal and rsamp count what was recorded (Record).
	rtotal, rsamp int64
	nodes         arena
	last          *node   // context of the latest sample
	next          *gstate // list of live goroutines
	prev          *gstate
	// kids caches child lookups: the slot of (parent, fn) holds the child
	// most recently found or made there. A sibling list is walked only on
	// a miss: in exact mode every call looks up its callee's node, and
	// walking long sibling lists took a sixth of encoding/json's run.
	kids []*node
}

// kidsBits is the log2 of the number of slots of a goroutine's child cache.
const kidsBits = 10

// child returns the child of n for f, made if new, through the cache.
func (g *gstate) child(n *node, f *Func) *node {
	h := kidSlot(n, f)
	if c := g.kids[h]; c != nil && c.parent == n && c.fn == f {
		return c
	}
	return g.miss(n, f, h)
}

// kidSlot returns the slot of the child cache for the child of n for f.
func kidSlot(n *node, f *Func) uint64 {
	return uint64(uintptr(unsafe.Pointer(n))^uintptr(unsafe.Pointer(f))>>3) * 0x9e3779b97f4a7c15 >> (64 - kidsBits)
}

// miss is child's slow path: the sibling list, then the cache slot h. A
// child found in the list moves to its front. (A full hash index of the
// tree instead of the lists was slower: go/types checking the standard
// library makes a million contexts, and every probe of an index that size
// missed the CPU's caches, where siblings, made one after the other, often
// share cache lines.)
func (g *gstate) miss(n *node, f *Func, h uint64) *node {
	var prev *node
	c := n.child
	for c != nil && c.fn != f {
		prev, c = c, c.next
	}
	switch {
	case c == nil:
		c = n.childOf(f, &g.nodes)
	case prev != nil:
		prev.next = c.next
		c.next = n.child
		n.child = c
	}
	g.kids[h] = c
	return c
}

// maxPath is the depth the path cache of a goroutine can hold; deeper
// stacks are walked from the last cached node.
const maxPath = 1024

// noStack stands for samples taken with an empty reified stack (code whose
// callers were all uninstrumented and that did not push itself).
var noStack = Func{Name: "(no stack)"}

// unsampled holds the instructions of goroutines that ended before their
// first sample (fewer instructions than the granularity): no context of
// theirs is known, and without it the contexts would not account for every
// instruction.
var unsampled = Func{Name: "(unsampled goroutines)"}

// CCT is the calling-context-tree agent behind both the sampling agent (SA)
// and the exact agent (JP): the exact agent is SA at granularity 0, so that
// every check attributes the instructions since the previous one and every
// entry check counts its call.
type CCT struct {
	set   Settings
	exact bool // set.Mode is exact

	mu    spinlock
	live  *gstate // goroutines that have sampled and not exited
	done  node    // merged trees of goroutines that have exited
	nodes arena   // for done
	total int64   // instructions of exited goroutines
	nsamp int64

	recording     atomic.Bool
	rtotal, rsamp int64 // recorded, of exited goroutines
}

// NewCCT returns a calling-context-tree agent with the given settings.
func NewCCT(set Settings) *CCT {
	if set.Mode == overlap.ModeExact {
		set.Granularity, set.Jitter = 0, 0
	}
	return &CCT{set: set, exact: set.Mode == overlap.ModeExact}
}

// local returns the calling goroutine's state, making it the first
// time. (Sample and SampleCall test the slot themselves first: local does
// not inline, and BenchmarkExactCall took 11 ns with the call, 8 without.)
func (a *CCT) local() *gstate {
	if p := counter.Local(); *p == nil {
		g := (*gstate)(counter.Alloc(unsafe.Sizeof(gstate{})))
		g.rng = a.set.Seed | 1
		g.verify = a.set.VerifyPaths
		g.path = unsafe.Slice((**node)(counter.Alloc(maxPath*unsafe.Sizeof((*node)(nil)))), maxPath)[:0]
		g.fns = unsafe.Slice((**Func)(counter.Alloc(maxPath*unsafe.Sizeof((*Func)(nil)))), maxPath)[:0]
		g.kids = unsafe.Slice((**node)(counter.Alloc(1<<kidsBits*unsafe.Sizeof((*node)(nil)))), 1<<kidsBits)
		*p = unsafe.Pointer(g)
		a.mu.Lock()
		g.next = a.live
		if a.live != nil {
			a.live.prev = g
		}
		a.live = g
		a.mu.Unlock()
	}
	return (*gstate)(*counter.Local())
}

// next returns the next granularity of g: g + r, r uniform in [0, R).
func (a *CCT) next(g *gstate) int64 {
	if a.set.Jitter <= 0 {
		return a.set.Granularity
	}
	// xorshift64*: per goroutine, seeded with the same constant.
	x := g.rng
	x ^= x >> 12
	x ^= x << 25
	x ^= x >> 27
	g.rng = x
	// r = ⌊x·R / 2⁶⁴⌋, uniform in [0, R): a multiplication, where r % R
	// took a division, a tenth of a sample's cost.
	r, _ := bits.Mul64(x*2685821657736338717, uint64(a.set.Jitter))
	return a.set.Granularity + int64(r)
}

// Register implements Profiler.
func (a *CCT) Register() int64 { return a.next(a.local()) }

// Sample implements Profiler. Its cost is proportional to the part of the
// stack that changed since the goroutine's previous sample.
func (a *CCT) Sample(stack []*Func, from int, n int64) int64 {
	g := (*gstate)(*counter.Local())
	if g == nil {
		g = a.local()
	}
	g.busy = true
	cur := g.cached(stack, from)
	if cur == nil {
		cur = g.walk(stack, from)
	}
	g.add(cur, n, a.recording.Load())
	g.busy = false
	return a.next(g)
}

// add counts a sample of n instructions in context cur. The caller has set
// g.busy.
func (g *gstate) add(cur *node, n int64, rec bool) {
	cur.samples++
	cur.instr += n
	g.last = cur
	g.total += n
	g.nsamp++
	if rec {
		cur.rsamples++
		cur.rinstr += n
		g.rtotal += n
		g.rsamp++
	}
}

// SampleCall implements counter.CallCounter: a sample at a function's
// entry check, in the caller's context; in exact mode it also counts the
// call of callee in that context.
func (a *CCT) SampleCall(stack []*Func, from int, callee *Func, n int64) int64 {
	g := (*gstate)(*counter.Local())
	if g == nil {
		g = a.local()
	}
	rec := a.recording.Load()
	g.busy = true
	if !a.exact {
		if n > 0 {
			g.add(g.context(stack, from), n, rec)
		}
		g.busy = false
		return a.next(g)
	}
	// One walk of the stack for both the sample and the call.
	parent := &g.root
	if len(stack) > 0 {
		if parent = g.cached(stack, from); parent == nil {
			parent = g.walk(stack, from)
		}
	} else {
		g.cut(0) // the next sample's from is against this stack
	}
	if n > 0 {
		cur := parent
		if len(stack) == 0 {
			cur = g.child(parent, &noStack) // as context does
		}
		g.add(cur, n, rec)
	}
	// g.child, with its cache hit written out: child does not inline,
	// and the call costs a twentieth of BenchmarkExactCall (8.4 ns
	// against 8.0).
	h := kidSlot(parent, callee)
	c := g.kids[h]
	if c == nil || c.parent != parent || c.fn != callee {
		c = g.miss(parent, callee, h)
	}
	// The callee pushes itself next: its node is the next sample's.
	if len(g.path) == len(stack) {
		g.extend(c)
	}
	c.calls++
	if rec {
		c.rcalls++
	}
	g.busy = false
	return 0
}

// context returns the node of stack, walking the tree from the longest
// prefix the path cache shares with it and updating the cache. The caller
// has set g.busy.
func (g *gstate) context(stack []*Func, from int) *node {
	if c := g.cached(stack, from); c != nil {
		return c
	}
	return g.walk(stack, from)
}

// cached returns the node of stack if all of it is the previous sample's
// (exact mode, mostly), or all of it but its top, which the path's next
// node names (the function an entry sample announced, sampled before it
// pushes itself: a leaf, or a function that pushes lazily), and nil
// otherwise.
func (g *gstate) cached(stack []*Func, from int) *node {
	k := len(stack)
	if k == 0 || k > len(g.path) || g.verify {
		return nil
	}
	if k <= from || k == from+1 && g.fns[k-1] == stack[k-1] {
		g.cut(k)
		return g.path[k-1]
	}
	return nil
}

// cut keeps the first k entries of the path cache.
func (g *gstate) cut(k int) {
	g.path = g.path[:k]
	g.fns = g.fns[:k]
}

// extend appends n to the path cache, if it has room.
func (g *gstate) extend(n *node) {
	if len(g.path) < cap(g.path) {
		g.path = append(g.path, n)
		g.fns = g.fns[:len(g.path)]
		g.fns[len(g.path)-1] = n.fn
	}
}

// walk is context's general case.
func (g *gstate) walk(stack []*Func, from int) *node {
	// stack[:from] is the previous sample's: its cached path holds.
	fns := g.fns
	if len(fns) > len(stack) {
		fns = fns[:len(stack)]
	}
	i := 0
	if from > 0 {
		i = min(from, len(fns))
	}
	if g.verify {
		for j := range i {
			if fns[j] != stack[j] {
				panic(fmt.Sprintf("kprof: agent: stack entry %d is %s, the cached path has %s (from %d)", j, stack[j].Name, fns[j].Name, from))
			}
		}
	}
	// Both of the same length: no bounds checks in the loop.
	for st := stack[:len(fns)]; i < len(fns) && fns[i] == st[i]; {
		i++
	}
	// The path in locals while it grows: stores to g would make the
	// compiler load its fields again at each level.
	path, fns := g.path[:i], g.fns[:i]
	cur := &g.root
	if i > 0 {
		cur = path[i-1]
	}
	for _, f := range stack[i:] {
		// The first child (miss moves the child it finds to the front),
		// else g.child, with its cache hit written out (child does not
		// inline).
		c := cur.child
		if c == nil || c.fn != f {
			h := kidSlot(cur, f)
			if c = g.kids[h]; c == nil || c.parent != cur || c.fn != f {
				c = g.miss(cur, f, h)
			}
		}
		cur = c
		if len(path) < cap(path) && len(fns) < cap(fns) {
			path = append(path, cur)
			fns = append(fns, f)
		}
	}
	g.path, g.fns = path, fns
	if len(stack) == 0 {
		cur = g.child(cur, &noStack) // the root has no counts of its own
	}
	return cur
}

// FlushRunning takes in what goroutines still running ran since their last
// sample, estimated in the context of that sample — as Exit does when a
// goroutine ends, so the profile does not depend on whether a goroutine
// finished before the program did — or at their current stack if they
// never sampled. Called at program exit; the running goroutines' own trees
// are only read.
func (a *CCT) FlushRunning() {
	a.mu.Lock()
	defer a.mu.Unlock()
	var path [maxPath]*Func
	counter.FlushOthers(func(stack []*Func, n int64, local unsafe.Pointer) {
		if local != nil {
			if last := (*gstate)(local).last; last != nil {
				k := len(path)
				for x := last; x.parent != nil && k > 0; x = x.parent {
					k--
					path[k] = x.fn
				}
				stack = path[k:]
			}
		}
		cur := &a.done
		for _, f := range stack {
			cur = cur.childOf(f, &a.nodes)
		}
		if len(stack) == 0 {
			cur = cur.childOf(&noStack, &a.nodes)
		}
		cur.instr += n
		a.total += n
	})
}

// Exit implements Profiler: the goroutine's tree joins the merged one.
func (a *CCT) Exit(n int64) { a.exit(nil, n) }

// ExitClaim implements counter.ExitClaimer: the tail is claimed under a.mu,
// which FlushRunning holds while it claims the tails of the goroutines
// still running, and recorded before a.mu is released.
func (a *CCT) ExitClaim(claim func() int64) { a.exit(claim, 0) }

// exit ends the calling goroutine's tree; its tail is n, or what claim
// returns (called under a.mu).
func (a *CCT) exit(claim func() int64, n int64) {
	p := counter.Local()
	a.mu.Lock()
	defer a.mu.Unlock()
	if claim != nil {
		n = claim()
	}
	if *p == nil {
		a.total += n
		if n > 0 {
			a.done.childOf(&unsampled, &a.nodes).instr += n
		}
		return
	}
	// Others read g holding a.mu, as this does.
	g := (*gstate)(*p)
	*p = nil
	g.total += n
	rec := a.recording.Load()
	if rec {
		g.rtotal += n
	}
	if g.last != nil {
		// What the goroutine ran after its last sample is estimated in
		// the context of that sample, so that the contexts account for
		// every instruction (δb of the sum over contexts is 0).
		g.last.instr += n
		if rec {
			g.last.rinstr += n
		}
	} else if n > 0 {
		u := g.child(&g.root, &unsampled)
		u.instr += n
		if rec {
			u.rinstr += n
		}
	}
	if g.prev != nil {
		g.prev.next = g.next
	} else {
		a.live = g.next
	}
	if g.next != nil {
		g.next.prev = g.prev
	}
	merge(&a.done, &g.root, &a.nodes)
	a.total += g.total
	a.nsamp += g.nsamp
	a.rtotal += g.rtotal
	a.rsamp += g.rsamp
}

func merge(dst, src *node, a *arena) {
	dst.samples += src.samples
	dst.instr += src.instr
	dst.calls += src.calls
	dst.rsamples += src.rsamples
	dst.rinstr += src.rinstr
	dst.rcalls += src.rcalls
	for c := src.child; c != nil; c = c.next {
		merge(dst.childOf(c.fn, a), c, a)
	}
}

// Profile returns the profile of everything sampled so far.
func (a *CCT) Profile(meta overlap.Meta) *overlap.Profile { return a.profile(meta, false) }

// RecordProfile returns the profile of what was recorded (Record).
func (a *CCT) RecordProfile(meta overlap.Meta) *overlap.Profile { return a.profile(meta, true) }

// Record implements counter.Recorder's Record.
func (a *CCT) Record(on bool) { a.recording.Store(on) }

// ResetRecord implements counter.Recorder's ResetRecord.
func (a *CCT) ResetRecord() {
	a.mu.Lock()
	defer a.mu.Unlock()
	forget(&a.done)
	a.rtotal, a.rsamp = 0, 0
	restart := a.stopped()
	defer restart()
	for g := a.live; g != nil; g = g.next {
		forget(&g.root)
		g.rtotal, g.rsamp = 0, 0
	}
}

// prune drops the contexts of a profile tree that have no counts below
// them, and reports whether n keeps any.
func prune(n *overlap.Node) bool {
	keep := n.Samples != 0 || n.Instructions != 0 || n.Calls != 0
	kids := n.Children[:0]
	for _, c := range n.Children {
		if prune(c) {
			kids = append(kids, c)
			keep = true
		}
	}
	clear(n.Children[len(kids):])
	n.Children = kids
	return keep
}

func forget(n *node) {
	n.rsamples, n.rinstr, n.rcalls = 0, 0, 0
	for c := n.child; c != nil; c = c.next {
		forget(c)
	}
}

func (a *CCT) profile(meta overlap.Meta, recorded bool) *overlap.Profile {
	a.mu.Lock()
	defer a.mu.Unlock()
	root := &overlap.Node{}
	addTree(root, &a.done, recorded)
	total, nsamp := a.total, a.nsamp
	if recorded {
		total, nsamp = a.rtotal, a.rsamp
	}
	p := &overlap.Profile{Meta: meta, Root: root}
	// With the world stopped, the live goroutines' trees are copied off
	// the heap (allocating on the heap could start a GC, which stops the
	// world itself).
	var live node
	restart := a.stopped()
	for g := a.live; g != nil; g = g.next {
		merge(&live, &g.root, &a.nodes)
		if recorded {
			total += g.rtotal
			nsamp += g.rsamp
		} else {
			total += g.total
			nsamp += g.nsamp
		}
	}
	restart()
	addTree(root, &live, recorded)
	if recorded {
		prune(root)
	}
	meta.Mode = a.set.Mode
	meta.Granularity = a.set.Granularity
	meta.Jitter = a.set.Jitter
	meta.Seed = a.set.Seed
	meta.MetricVersion = overlap.MetricVersion
	meta.KprofVersion = Version
	p.Meta = meta
	p.TotalInstructions, p.TotalSamples = total, nsamp
	p.Canonicalize()
	return p
}

func ofunc(f *Func) overlap.Func {
	return overlap.Func{Name: f.Name, File: f.File, Line: f.Line}
}

// addTree adds the counts of an off-heap tree (the recorded ones if
// recorded) to a profile tree.
func addTree(dst *overlap.Node, src *node, recorded bool) {
	if recorded {
		dst.Samples += src.rsamples
		dst.Instructions += src.rinstr
		dst.Calls += src.rcalls
	} else {
		dst.Samples += src.samples
		dst.Instructions += src.instr
		dst.Calls += src.calls
	}
	for c := src.child; c != nil; c = c.next {
		addTree(dst.Child(ofunc(c.fn)), c, recorded)
	}
}

// stopped stops the world with no goroutine in the middle of a sample
// (busy), for a reader of the live goroutines' trees that holds a.mu, and
// returns the function that restarts it. A busy goroutine was preempted
// within a few instructions of being done: the world restarts until it is.
func (a *CCT) stopped() (restart func()) {
	// The caller's own state may be busy only if a sample of its own
	// panicked (the exit then still writes the profile).
	self := (*gstate)(*counter.Local())
	for {
		restart := counter.StopTheWorld()
		busy := false
		for g := a.live; g != nil && !busy; g = g.next {
			busy = g.busy && g != self
		}
		if !busy {
			return restart
		}
		restart()
		runtime.Gosched()
	}
}

// spinlock guards the CCT's shared state: the list of live goroutines,
// the merged tree of exited ones, and readers of both. It is taken when a
// goroutine first samples, when it exits, and when the profile is read,
// never on the sample path; unlike sync.Mutex it runs no instrumented code
// and needs no heap.
type spinlock struct{ v int32 }

func (l *spinlock) Lock() {
	for !atomic.CompareAndSwapInt32(&l.v, 0, 1) {
		runtime.Gosched()
	}
}

func (l *spinlock) Unlock() { atomic.StoreInt32(&l.v, 0) }
