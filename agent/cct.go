package agent

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"os"
	"runtime"
	"sync/atomic"
	"unsafe"

	"github.com/kprof/kprof/counter"
	"github.com/kprof/kprof/profile"
)

// Settings configure the built-in agents.
type Settings struct {
	Mode        string // profile.ModeSample or profile.ModeExact
	Granularity int64  // g
	Jitter      int64  // R: granularities are g + r, r uniform in [0, R)
	Seed        uint64 // seed of every goroutine's PRNG
	// VerifyPaths checks, at every sample, the part of the stack the
	// counter reports unchanged against the cached path, and panics if it
	// changed: kprof's tests set it (KPROF_VERIFY_PATHS=1).
	VerifyPaths bool
	// MaxContexts bounds the calling contexts one goroutine may add to
	// the profile (0: DefaultMaxContexts). A goroutine that has counted
	// that many distinct contexts goes on in the ones it has; a stack
	// that would need another is counted, from the deepest context of
	// its own it shares, below an overflow context (Overflow) whose
	// children are the stacks' innermost functions. Those have a
	// budget as large (beyond it, the overflow context at the root
	// takes them), so that a goroutine adds at most three times
	// MaxContexts contexts, and one per function. The bound holds
	// per goroutine, counted in the order it runs, so a deterministic
	// program's profile stays the same on every run.
	MaxContexts int64
}

// DefaultMaxContexts is the default of Settings.MaxContexts: about 230 MB
// of contexts in sample mode, 270 MB in exact mode. Programs that need
// more are rare: of the standard library's tests, encoding/asn1's nesting
// limits need about 50 million (each of 10,000 levels of a recursion
// starts another recursion as deep), and took 4 GB without a bound;
// fmt's recursive scanning needs 4.8 million in exact mode (a tenth of
// fmt's test instructions then go below overflow contexts). Twice the
// bound cost asn1's tests twice the memory, 2 GB: each goroutine that
// reaches it holds that many contexts.
const DefaultMaxContexts = 1 << 22

// Overflow is the function of the overflow contexts (Settings.MaxContexts).
var Overflow = Func{Name: profile.OverflowName}

// The agent's trees live outside the Go heap (counter.Alloc): sampling
// allocates nothing the program could observe (testing.AllocsPerRun, GC
// pacing), which also keeps runs reproducible. Off-heap records hold only
// pointers to other off-heap records and to the static Func tables.
//
// Off-heap memory is never given back to the system, so it is recycled
// instead: what a goroutine used passes to the next goroutine that runs on
// the same runtime g (the counter keeps the agent's slot with the g,
// counter.SlotReuser), and the runtime reuses g's. The agent's memory is
// then that of the goroutines alive at the peak, each with a path cache as
// deep as its deepest stack and a tree of at most mergeNodes contexts (or
// those of the goroutine's own run, if more), plus the merged tree, which
// holds each calling context of the profile once: it grows with the
// profile, not with the number of goroutines or samples.

// node is one calling context of a tree; its children form a linked list
// (few children per context; the path cache avoids most walks). In exact
// mode the calls that entered it follow it in memory (nodeChunk); its
// recorded counts, which most contexts of most runs do not have, live
// beside it in its chunk. A context then takes 56 bytes in sample mode and
// 64 in exact mode: a deep recursion's profile holds millions.
type node struct {
	// What a walk of the tree reads comes first, in as few cache lines
	// as may be.
	fn *Func
	// stamp is the gstate.gid of the latest goroutine that counted the
	// context against its budget (visit, overflowed).
	stamp   uint64
	child   *node // first child
	parent  *node // nil for a tree's root, which is no chunk's
	next    *node // next sibling
	samples int64
	instr   int64
}

// recCounts are a node's counts while recording (Record): a benchmark's
// timed part.
type recCounts struct{ samples, instr, calls int64 }

// arena hands out nodes from off-heap chunks, which it keeps: after reset
// it hands out the same memory again. The chunks it gives back (release)
// go to the CCT's pool, which every arena of the CCT draws from before it
// allocates.
type arena struct {
	first, cur *nodeChunk
	used       int // nodes of cur handed out
	n          int // nodes handed out since reset
	pool       *chunkPool
}

// chunkSize is the size and alignment of a nodeChunk: a node's chunk is
// found from its address.
const chunkSize = 2048

// Sizes of a node: in sample mode, and in exact mode with its calls.
const (
	sampleNode = unsafe.Sizeof(node{})
	exactNode  = sampleNode + unsafe.Sizeof(int64(0))
)

// nodeChunk is a block of nodes, which follow its header: chunkNodes of
// sampleNode or exactNode bytes each, by its mode. An arena's chunks form a
// list. The recorded counts of its nodes are an array of their own, made
// when one is first recorded.
type nodeChunk struct {
	next  *nodeChunk
	recs  *[maxChunkNodes]recCounts
	exact bool
}

// chunkNodes returns the number of nodes of a chunk.
func chunkNodes(exact bool) int {
	if exact {
		return int((chunkSize - chunkHeader) / exactNode)
	}
	return int(maxChunkNodes)
}

// chunkHeader is the size of a nodeChunk, its nodes not included.
const chunkHeader = 3 * unsafe.Sizeof(uintptr(0))

var _ [chunkHeader - unsafe.Sizeof(nodeChunk{})]byte // (it fits)

const maxChunkNodes = (chunkSize - chunkHeader) / sampleNode

// at returns the i-th node of c.
func (c *nodeChunk) at(i int) *node {
	size := sampleNode
	if c.exact {
		size = exactNode
	}
	return (*node)(unsafe.Add(unsafe.Pointer(c), chunkHeader+uintptr(i)*size))
}

// chunkAt returns the chunk of n, a node other than a root.
func chunkAt(n *node) *nodeChunk {
	return (*nodeChunk)(unsafe.Pointer(uintptr(unsafe.Pointer(n)) &^ (chunkSize - 1)))
}

// chunkOf returns the chunk of n, a node other than a root, and n's index
// in it.
func chunkOf(n *node) (*nodeChunk, uintptr) {
	c := chunkAt(n)
	off := uintptr(unsafe.Pointer(n))&(chunkSize-1) - chunkHeader
	if c.exact {
		return c, off / exactNode
	}
	return c, off / sampleNode
}

// callsOf returns the calls of n, a node other than a root, in exact mode.
func callsOf(n *node) *int64 { return (*int64)(unsafe.Add(unsafe.Pointer(n), sampleNode)) }

// calls returns the calls that entered n (exact mode).
func (n *node) calls() int64 {
	if n.parent == nil {
		return 0 // (a root is never called)
	}
	if !chunkAt(n).exact {
		return 0
	}
	return *callsOf(n)
}

// recorded returns the recorded counts of n, nil if its chunk has none.
func (n *node) recorded() *recCounts {
	if n.parent == nil {
		return nil // (a root has no counts)
	}
	c, i := chunkOf(n)
	if c.recs == nil {
		return nil
	}
	return &c.recs[i]
}

func (a *arena) new(f *Func) *node {
	if a.cur == nil || a.used == chunkNodes(a.cur.exact) {
		next := a.first
		if a.cur != nil {
			next = a.cur.next
		}
		if next == nil {
			next = a.pool.get()
			if a.cur == nil {
				a.first = next
			} else {
				a.cur.next = next
			}
		}
		a.cur, a.used = next, 0
	}
	c, i := a.cur, a.used
	n := c.at(i)
	a.used++
	a.n++
	// (Reused memory holds a former node.)
	*n = node{fn: f}
	if c.exact {
		*callsOf(n) = 0
	}
	if c.recs != nil {
		c.recs[i] = recCounts{}
	}
	return n
}

// reset makes every node handed out free again. The caller has zeroed
// them (a child cache may still point at them: see child).
func (a *arena) reset() { a.cur, a.used, a.n = nil, 0, 0 }

// rec returns the recorded counts of n, a node of the arena's tree other
// than its root, making its chunk's if it has none.
func (a *arena) rec(n *node) *recCounts {
	c, i := chunkOf(n)
	if c.recs == nil {
		c.recs = (*[maxChunkNodes]recCounts)(counter.Alloc(unsafe.Sizeof([maxChunkNodes]recCounts{})))
	}
	return &c.recs[i]
}

// release is reset that also gives every chunk but the first to the pool:
// the memory of a tree that has been merged serves the tree that grows
// next, in whichever goroutine.
func (a *arena) release() {
	a.reset()
	if a.first != nil && a.first.next != nil {
		a.pool.put(a.first.next)
		a.first.next = nil
	}
}

// chunkPool holds the free chunks of a CCT's arenas. Its lock is taken
// once per chunk of contexts a tree gains or frees, never per sample.
type chunkPool struct {
	mu    spinlock
	free  *nodeChunk
	exact bool // chunks hold exact mode's nodes
	// The rest of the latest slab, from which chunks are cut aligned.
	slab unsafe.Pointer
	left int // chunks
}

// slabChunks is the number of chunks allocated at once.
const slabChunks = 32

// get returns a free chunk, from the pool or newly allocated.
func (p *chunkPool) get() *nodeChunk {
	p.mu.Lock()
	c := p.free
	if c != nil {
		p.free, c.next = c.next, nil
	} else {
		c = p.cut()
	}
	p.mu.Unlock()
	return c
}

// cut returns a new chunk, cut from the slab. The caller holds p.mu.
func (p *chunkPool) cut() *nodeChunk {
	if p.left == 0 {
		// Off-heap memory is aligned to 8 bytes: one chunk more than
		// the slab's, to align the first.
		s := counter.Alloc((slabChunks + 1) * chunkSize)
		p.slab = unsafe.Add(s, (chunkSize-uintptr(s)%chunkSize)%chunkSize)
		p.left = slabChunks
	}
	c := (*nodeChunk)(p.slab)
	p.slab = unsafe.Add(p.slab, chunkSize)
	p.left--
	c.exact = p.exact
	return c
}

// put adds the list of chunks that starts at c to the pool.
func (p *chunkPool) put(c *nodeChunk) {
	last := c
	for last.next != nil {
		last = last.next
	}
	p.mu.Lock()
	last.next, p.free = p.free, c
	p.mu.Unlock()
}

// find returns n's child for f, nil if it has none.
func (n *node) find(f *Func) *node {
	c := n.child
	for c != nil && c.fn != f {
		c = c.next
	}
	return c
}

// childOf returns n's child for f, made in a if new.
func (n *node) childOf(f *Func, a *arena) *node {
	if c := n.find(f); c != nil {
		return c
	}
	c := a.new(f)
	c.next = n.child
	c.parent = n
	n.child = c
	return c
}

// gstate is the state of a goroutine: its tree, path cache and PRNG. It
// passes to the next goroutine on the same runtime g when the goroutine
// ends (see above), tree and all: goroutines add up their counts in it
// until it is merged into the CCT's tree.
//
// Only its goroutine writes it, with busy set; another goroutine reads it
// holding CCT.mu, with the world stopped (counter.StopTheWorld) and no
// goroutine busy (see stopped). An atomic lock here would cost more than
// the rest of an exact-mode sample.
type gstate struct {
	busy   bool
	verify bool // Settings.VerifyPaths
	// take is set when the goroutine's tree reaches mergeNodes contexts or a
	// power of two above:
	// at the end of the sample it takes the merged tree (CCT.take).
	take  bool
	owner uint64 // CCT.id of the agent that made it
	// gid identifies the goroutine that runs with the state: state
	// number and generation (Register). visits counts the contexts it
	// has stamped (visit), over the overflow contexts' children
	// (overflowed); budget is Settings.MaxContexts, the bound of each.
	gid, sid             uint64
	visits, over, budget int64
	root                 node
	// The path cache (paper Fig. 9): path[i] is the node of fns[:i+1], and
	// fns[:n] the stack of the goroutine's previous sample. The entries
	// beyond n are those of an earlier, deeper sample, kept: a stack that
	// returns and grows back along the same path (recursion) is then
	// compared with them, where it would otherwise walk the tree. Both
	// grow with the deepest stack sampled (reserve).
	path []*node
	fns  []*Func
	n    int
	rng  uint64
	// Counts of the goroutines that used this state (Profile adds them
	// up): total and nsamp, and what was recorded (Record).
	total, nsamp  int64
	rtotal, rsamp int64
	nodes         arena
	last          *node   // context of the goroutine's latest sample
	all           *gstate // list of every state made (CCT.all)
	// kids caches child lookups: the slot of (parent, fn) holds the child
	// most recently found or made there. A sibling list is walked only on
	// a miss: in exact mode every call looks up its callee's node, and
	// walking long sibling lists took a sixth of encoding/json's run.
	kids      []*node
	kidsShift uint // 64 - log2(len(kids))
	// What FlushRunning took from the goroutine (it alone writes these).
	flushN    int64
	flushLast *node
	// Samples not yet counted in the tree (addLater); every reader of the
	// tree's counts flushes them first.
	pend  [32]pending
	npend int
}

// pending is a sample of instr instructions in context n.
type pending struct {
	n     *node
	instr int64
}

// A goroutine's child cache has 1<<minKidsBits slots at first, and
// doubles as its tree grows, up to 1<<kidsBits: a goroutine that makes
// few contexts (a request handler, a paused parallel test) costs little.
const (
	minKidsBits = 6
	kidsBits    = 12
)

// mergeNodes is the size of a tree, in contexts, from which a goroutine
// that ends merges it into the CCT's tree and frees it. Below it, the
// tree passes to the next goroutine on the g as it is: the ending costs
// nothing, and most goroutines that share a g run the same code (the same
// start function), so they share the contexts too.
const mergeNodes = 256

// child returns the child of n for f, made if new, through the cache.
func (g *gstate) child(n *node, f *Func) *node {
	h := g.kidSlot(n, f)
	// A cached node that was freed (merge) has no parent; one handed out
	// again is a child of its parent for its function.
	if c := g.kids[h]; c != nil && c.parent == n && c.fn == f {
		return c
	}
	return g.miss(n, f, h)
}

// kidSlot returns the slot of the child cache for the child of n for f.
func (g *gstate) kidSlot(n *node, f *Func) uint64 {
	return uint64(uintptr(unsafe.Pointer(n))^uintptr(unsafe.Pointer(f))>>3) * 0x9e3779b97f4a7c15 >> g.kidsShift
}

// makeKids gives g an empty child cache of 1<<bits slots. (A smaller one
// it had is not freed: off-heap memory never is. The sizes double, so the
// ones left behind add up to less than the last.)
func (g *gstate) makeKids(bits uint) {
	g.kids = unsafe.Slice((**node)(counter.Alloc(1<<bits*unsafe.Sizeof((*node)(nil)))), 1<<bits)
	g.kidsShift = 64 - bits
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
		if n.fn == &Overflow || overflowChild(n) || g.visits >= g.budget && n.parent != nil {
			// (Not cached: the slot is for n's own child.)
			return g.overflowed(n, f)
		}
		c = n.childOf(f, &g.nodes)
		// At mergeNodes contexts and each power of two above (the
		// goroutines that ran before may still be ending), a goroutine's
		// state, not the merged tree or scratch, tries to take the
		// merged tree.
		k := g.nodes.n
		g.take = g.take || k >= mergeNodes && k&(k-1) == 0 && g.owner != 0
	case prev != nil:
		prev.next = c.next
		c.next = n.child
		n.child = c
	}
	g.kids[h] = c
	if b := 64 - g.kidsShift; b < kidsBits && g.nodes.n > 2<<b {
		g.makeKids(b + 1)
	}
	return c
}

// visit is the budget's check of c, the child of cur for f, when the
// goroutine meets it on a walk and did not stamp it: it stamps c if the
// budget allows, or returns the overflow context of cur for f. (Nodes the
// goroutine reaches through its path cache it has stamped already: the
// cache is its own since it registered, or rebuilt by take from nodes it
// stamped.)
//
//go:noinline
func (g *gstate) visit(cur, c *node, f *Func) *node {
	// (Not an overflow context's child: overflowed, the only way to
	// one, stamps it.)
	if g.visits < g.budget || cur.parent == nil {
		// (The outermost functions are never beyond a budget: there
		// are no more of them than functions.)
		g.visits++
		c.stamp = g.gid
		return c
	}
	return g.overflowed(cur, f)
}

// overflowChild reports whether n is the child of an overflow context.
// What is an overflow context is known from the functions alone, in every
// tree, however its nodes were made (merge, FlushRunning).
func overflowChild(n *node) bool { return n.parent != nil && n.parent.fn == &Overflow }

// overflowed returns the overflow context for f below n: the child for f
// of n's overflow context, made if new. An overflow context's children
// have no children of their own: below one of them (n), the child for f
// is its overflow context's.
//
// A goroutine's overflow contexts have a budget too, as large as its
// contexts' (counted as the goroutine first reaches them, as visit
// counts): beyond it, a stack that needs another goes to the child for f
// of the goroutine's overflow context at the root, of which there are no
// more than functions. The trees of no goroutine (the merged tree and
// scratch) have no budget.
func (g *gstate) overflowed(n *node, f *Func) *node {
	var o *node
	switch {
	case n.fn == &Overflow:
		o = n // (merge, making an overflow context's children)
	case overflowChild(n):
		o = n.parent
	}
	capped := g.owner != 0 && g.over >= g.budget
	if o == nil {
		o = g.marked(n, &Overflow, !capped)
	}
	var c *node
	if o != nil {
		c = g.marked(o, f, !capped)
	}
	if g.owner == 0 {
		return c
	}
	switch {
	case c == nil || capped && c.stamp != g.gid:
		c = g.marked(g.marked(&g.root, &Overflow, true), f, true)
	case c.stamp != g.gid && o.parent != &g.root:
		g.over++
	}
	c.stamp = g.gid
	return c
}

// marked returns n's child for f, through the child cache; if n has none,
// it makes one if create is set, and returns nil otherwise.
func (g *gstate) marked(n *node, f *Func, create bool) *node {
	h := g.kidSlot(n, f)
	if c := g.kids[h]; c != nil && c.parent == n && c.fn == f {
		return c
	}
	var c *node
	if create {
		c = n.childOf(f, &g.nodes)
	} else if c = n.find(f); c == nil {
		return nil
	}
	g.kids[h] = c
	return c
}

// newState returns a state with an empty tree and path cache.
func newState(verify bool, pool *chunkPool) *gstate {
	g := (*gstate)(counter.Alloc(unsafe.Sizeof(gstate{})))
	g.verify = verify
	g.budget = math.MaxInt64
	g.nodes.pool = pool
	g.makeKids(minKidsBits)
	g.reserve(16)
	return g
}

// reserve makes room in the path cache for a stack of depth d. The arrays
// double, so that growing to depth d costs O(d) in all.
func (g *gstate) reserve(d int) {
	if d <= cap(g.path) {
		return
	}
	c := max(2*cap(g.path), 16)
	for c < d {
		c *= 2
	}
	path := unsafe.Slice((**node)(counter.Alloc(uintptr(c)*unsafe.Sizeof((*node)(nil)))), c)
	fns := unsafe.Slice((**Func)(counter.Alloc(uintptr(c)*unsafe.Sizeof((*Func)(nil)))), c)
	copy(path, g.path)
	copy(fns, g.fns)
	// (The old arrays are not freed: off-heap memory never is.)
	g.path, g.fns = path[:len(g.path)], fns[:len(g.path)]
}

// noStack stands for samples taken with an empty reified stack (code whose
// callers were all uninstrumented and that did not push itself).
var noStack = Func{Name: "(no stack)"}

// unsampled holds the instructions of goroutines that ended before their
// first sample (fewer instructions than the granularity): no context of
// theirs is known, and without it the contexts would not account for every
// instruction.
var unsampled = Func{Name: "(unsampled goroutines)"}

// ids numbers CCTs (gstate.owner).
var ids atomic.Uint64

// CCT is the calling-context-tree agent behind both the sampling agent (SA)
// and the exact agent (JP): the exact agent is SA at granularity 0, so that
// every check attributes the instructions since the previous one and every
// entry check counts its call.
type CCT struct {
	set   Settings
	exact bool   // set.Mode is exact
	id    uint64 // gstate.owner of its states
	first int64  // granularity until a goroutine's first sample
	rng   uint64 // a goroutine's PRNG after drawing first

	mu      spinlock
	all     *gstate    // every goroutine state made
	nstates uint64     // states in all (gstate.sid)
	pool    *chunkPool // free chunks of nodes
	// merged holds the trees merged by ending goroutines (its root) and
	// the instructions of goroutines that never registered (its totals).
	merged *gstate
	// scratch holds, while a profile is read, a copy of the states' trees.
	scratch *gstate

	recording atomic.Bool
	// exiting counts the goroutines between the start and the end of
	// their claim (exit), which a snapshot that stops the world waits
	// for. Function-style atomics: sync/atomic's methods are Go code,
	// counted (and checked) in -nondeterministic builds, and a check
	// that fires in the agent ends the period the claim measures. 32
	// bits: a 64-bit field need not be aligned for atomics on 386.
	exiting int32
}

// NewCCT returns a calling-context-tree agent with the given settings.
func NewCCT(set Settings) *CCT {
	if set.Mode == profile.ModeExact {
		set.Granularity, set.Jitter = 0, 0
	}
	if set.MaxContexts <= 0 {
		set.MaxContexts = DefaultMaxContexts
	}
	a := &CCT{set: set, exact: set.Mode == profile.ModeExact, id: ids.Add(1)}
	a.pool = (*chunkPool)(counter.Alloc(unsafe.Sizeof(chunkPool{})))
	a.pool.exact = a.exact
	a.merged = newState(false, a.pool)
	a.scratch = newState(false, a.pool)
	// Every goroutine's PRNG starts from the seed: its first granularity,
	// and the PRNG after it, are the same for all of them.
	g := gstate{rng: set.Seed | 1}
	a.first, a.rng = a.next(&g), g.rng
	return a
}

// ReusesSlots implements counter.SlotReuser: a goroutine's state holds no
// heap pointer and is reset when the next goroutine registers.
func (a *CCT) ReusesSlots() {}

// local returns the calling goroutine's state, made if it has none. The
// state the slot holds may be the one a goroutine that ended on the same
// g left (counter.SlotReuser); a goroutine starts it with start. (Sample
// and SampleCall test the slot themselves first: local does not inline,
// and BenchmarkExactCall took 11 ns with the call, 8 without.)
func (a *CCT) local() *gstate {
	p := counter.Local()
	if g := (*gstate)(*p); g != nil && g.owner == a.id {
		return g
	}
	g := newState(a.set.VerifyPaths, a.pool)
	g.owner = a.id
	g.rng = a.set.Seed | 1
	g.budget = a.set.MaxContexts
	a.mu.Lock()
	g.all = a.all
	a.all = g
	a.nstates++
	g.sid = a.nstates << genBits
	a.mu.Unlock()
	g.gid = g.sid | 1
	*p = unsafe.Pointer(g)
	return g
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

// Register implements Profiler: the goroutine starts its state (the one
// its g's previous goroutine left, mostly) with no previous sample, and
// its PRNG from the seed. No lock and no allocation, except for the first
// goroutine on a g.
func (a *CCT) Register() int64 {
	g := a.local()
	g.rng, g.n, g.last = a.rng, 0, nil
	// A new goroutine, with a budget of its own; the path cache's kept
	// entries are its predecessor's, whose stamps are not its own.
	g.gid = g.sid | (g.gid+1)&(1<<genBits-1)
	g.visits, g.over = 0, 0
	g.path, g.fns = g.path[:0], g.fns[:0]
	return a.first
}

// genBits is the width of a goroutine's generation in its gid: the
// generation wraps after 2⁴⁰ goroutines on one state, and the state
// numbers after 2²⁴ states (goroutines alive at once), where a node may
// still hold the stamp of another goroutine's: that goroutine would not
// count it.
const genBits = 40

// Sample implements Profiler. Its cost is proportional to the part of the
// stack that changed since the goroutine's previous sample.
func (a *CCT) Sample(stack []*Func, from int, n int64) int64 {
	g := (*gstate)(*counter.Local())
	if g == nil {
		g = a.local()
	}
	g.busy = true
	var cur *node
	// lookup's first case written out (exact mode's returns): lookup
	// does not inline.
	if k := len(stack); k > 0 && k <= from && k <= g.n && !g.verify {
		g.n = k
		cur = g.path[k-1]
	} else {
		cur = g.context(stack, from)
	}
	if a.exact {
		// (add written out, so that its common part inlines)
		g.addUnrecorded(cur, n)
		if a.recording.Load() {
			g.addRecorded(cur, n)
		}
	} else {
		g.addLater(cur, n, a.recording.Load())
	}
	if g.take {
		a.take(g)
	}
	g.busy = false
	return a.next(g)
}

// addLater is add for sample mode: the sample's context is counted at the
// next flush, with those of the samples before it. A deep stack's node is
// seldom in the cache a granularity later (at depth 20,000 its cache miss
// was a third of a sample's cost); counted one after the other, their
// misses profile.
func (g *gstate) addLater(cur *node, n int64, rec bool) {
	if rec {
		g.add(cur, n, rec)
		return
	}
	g.pend[g.npend] = pending{cur, n}
	g.npend++
	if g.npend == len(g.pend) {
		g.flush()
	}
	g.last = cur
	g.total += n
	g.nsamp++
}

// flush counts the samples addLater kept.
func (g *gstate) flush() {
	for _, p := range g.pend[:g.npend] {
		p.n.samples++
		p.n.instr += p.instr
	}
	g.npend = 0
}

// add counts a sample of n instructions in context cur. The caller has set
// g.busy.
func (g *gstate) add(cur *node, n int64, rec bool) {
	g.addUnrecorded(cur, n)
	if rec {
		g.addRecorded(cur, n)
	}
}

// addUnrecorded is add's part outside recording, which inlines (exact
// mode adds once per sample). The caller has set g.busy, as for
// addRecorded.
func (g *gstate) addUnrecorded(cur *node, n int64) {
	cur.samples++
	cur.instr += n
	g.last = cur
	g.total += n
	g.nsamp++
}

// addRecorded is add's part while recording.
func (g *gstate) addRecorded(cur *node, n int64) {
	r := g.nodes.rec(cur)
	r.samples++
	r.instr += n
	g.rtotal += n
	g.rsamp++
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
			g.addLater(g.context(stack, from), n, rec)
		}
		if g.take {
			a.take(g)
		}
		g.busy = false
		return a.next(g)
	}
	// One walk of the stack for both the sample and the call.
	parent := &g.root
	if k := len(stack); k > 0 && k <= from && k <= g.n && !g.verify {
		// (lookup's first case, as in Sample.)
		g.n = k
		parent = g.path[k-1]
	} else if k > 0 {
		parent = g.lookup(stack, from)
	} else {
		g.n = 0 // the next sample's from is against this stack
	}
	if n > 0 {
		cur := parent
		if len(stack) == 0 {
			cur = g.child(parent, &noStack) // as context does
		}
		g.addUnrecorded(cur, n) // (add, as in Sample)
		if rec {
			g.addRecorded(cur, n)
		}
	}
	// The callee pushes itself next: its node is the next sample's top.
	// The path cache may hold it (stack is its prefix): a recursion that
	// descends again, a loop that calls the same function. The counter
	// reports the entry a sample announced as unchanged, up to the depth
	// below the next sample's function (Agent.Sample): it counts as the
	// previous sample's, so that the callee's own samples take the first
	// case of lookup.
	k := len(stack)
	g.n = k + 1
	var c *node
	if k < len(g.path) && g.fns[k] == callee {
		c = g.path[k]
	} else {
		c = g.leafChild(parent, callee, k)
	}
	*callsOf(c)++
	if rec {
		g.nodes.rec(c).calls++
	}
	if g.take {
		a.take(g)
	}
	g.busy = false
	return 0
}

// SampleEntries implements counter.RunBatcher: len(ms) calls, each from
// the callee of the one before, as SampleCall counts them one by one.
// After the first, each call's caller is the path cache's top: the loop
// takes SampleCall's common case alone.
func (a *CCT) SampleEntries(stack []*Func, from int, ms []int64) int64 {
	d := len(stack) - len(ms)
	if len(ms) == 0 {
		return 0
	}
	a.SampleCall(stack[:d], from, stack[d], ms[0])
	g := (*gstate)(*counter.Local())
	// (Should the goroutine have taken the merged tree, its path cache
	// holds its last context alone: the calls are counted one by one.)
	if g.verify || a.recording.Load() || g.n != d+1 {
		for i := 1; i < len(ms); i++ {
			a.SampleCall(stack[:d+i], d+i, stack[d+i], ms[i])
		}
		return 0
	}
	g.busy = true
	// (In locals: stores through g would make the compiler load its
	// fields again at each level, as in walk.)
	path, fns := g.path, g.fns
	path = path[:len(fns)]
	var total, nsamp int64
	var last *node
	ms = ms[1:]
	callees := stack[d+1:]
	callees = callees[:len(ms)]
	parent := path[d] // the first call's callee (SampleCall made it the cache's)
	for i, m := range ms {
		if m > 0 {
			parent.samples++
			parent.instr += m
			last = parent
			total += m
			nsamp++
		}
		k := d + 1 + i // the callee's depth
		callee := callees[i]
		var c *node
		if k < len(fns) && fns[k] == callee {
			c = path[k]
		} else {
			c = g.leafChild(parent, callee, k)
			path, fns = g.path, g.fns
			path = path[:len(fns)]
		}
		*callsOf(c)++
		parent = c
	}
	if last != nil {
		g.last = last
	}
	g.n = len(stack)
	g.total += total
	g.nsamp += nsamp
	if g.take {
		a.take(g)
	}
	g.busy = false
	return 0
}

// SampleReturns implements counter.RunBatcher: len(ns) samples, each one
// frame below the one before, as Sample counts them one by one. After the
// first, each sample's context is on the path cache: the loop takes
// Sample's common case alone.
func (a *CCT) SampleReturns(stack []*Func, from int, ns []int64) int64 {
	if len(ns) == 0 {
		return 0
	}
	a.Sample(stack, from, ns[0])
	if len(ns) == 1 {
		return 0
	}
	g := (*gstate)(*counter.Local())
	if g.verify || !a.exact || a.recording.Load() || g.n != len(stack) { // (see SampleEntries)
		for i := 1; i < len(ns); i++ {
			k := len(stack) - i
			a.Sample(stack[:k], k, ns[i])
		}
		return 0
	}
	g.busy = true
	k := len(stack)
	path := g.path[:k-1] // (the samples' contexts, below the first's)
	var total int64
	for _, n := range ns[1:] {
		k-- // (above 0: the counter keeps samples of pushed functions)
		cur := path[k-1]
		cur.samples++
		cur.instr += n
		total += n
	}
	g.last = path[k-1]
	g.n = k
	g.total += total
	g.nsamp += int64(len(ns) - 1)
	if g.take {
		a.take(g)
	}
	g.busy = false
	return 0
}

// SampleLeaf implements counter.LeafSampler: exact mode's two samples of a
// small leaf's call in one, SampleCall(stack[:k], from, stack[k], m) then
// Sample(stack, k, n), k = len(stack)-1: the call is counted in the
// caller's context, and the leaf's own instructions in the callee's
// context. Its common case — the caller's context on top of the path
// cache, nothing recorded — is written out, with no call; the others take
// the two samples.
func (a *CCT) SampleLeaf(stack []*Func, from int, m, n int64) int64 {
	k := len(stack) - 1
	g := (*gstate)(*counter.Local())
	if g == nil || k <= 0 || k > from || k > g.n || g.verify || !a.exact || a.recording.Load() {
		a.SampleCall(stack[:k], from, stack[k], m)
		return a.Sample(stack, k, n)
	}
	g.busy = true
	msamp := int64(0)
	if m > 0 {
		msamp = 1 // (add, for the caller's part)
	}
	g.leafCalls(g.path[k-1], stack[k], k, m, msamp, 1, n)
	if g.take {
		a.take(g)
	}
	g.busy = false
	return 0
}

// SampleLeaves implements counter.LeafBatcher: calls of the small leaf
// stack[k] from stack[:k], k = len(stack)-1, added up — the caller's m
// instructions in msamp samples, and the leaf's calls and n instructions
// (one sample per call) — as that many SampleLeaf calls would count them.
func (a *CCT) SampleLeaves(stack []*Func, from int, m, msamp, calls, n int64) int64 {
	k := len(stack) - 1
	g := (*gstate)(*counter.Local())
	if g == nil {
		g = a.local()
	}
	rec := a.recording.Load()
	g.busy = true
	var parent *node
	if k > 0 && k <= from && k <= g.n && !g.verify {
		parent = g.path[k-1]
	} else {
		parent = g.context(stack[:k], from)
	}
	c := g.leafCalls(parent, stack[k], k, m, msamp, calls, n)
	if rec {
		if msamp > 0 {
			r := g.nodes.rec(parent)
			r.samples += msamp
			r.instr += m
		}
		r := g.nodes.rec(c)
		r.calls += calls
		r.samples += calls
		r.instr += n
		g.rtotal += m + n
		g.rsamp += msamp + calls
	}
	if g.take {
		a.take(g)
	}
	g.busy = false
	return a.next(g)
}

// leafCalls counts calls of the leaf callee below parent, the path
// cache's entry k-1: the caller's m instructions in msamp samples, and the
// leaf's calls and n instructions, one sample per call. It returns the
// leaf's node, which it makes the path cache's top (the leaf's next
// sample finds it there, its from being k).
func (g *gstate) leafCalls(parent *node, callee *Func, k int, m, msamp, calls, n int64) *node {
	parent.samples += msamp
	parent.instr += m
	var c *node
	if k < len(g.path) && g.fns[k] == callee {
		c = g.path[k]
	} else {
		c = g.leafChild(parent, callee, k)
	}
	g.n = k + 1
	*callsOf(c) += calls
	c.samples += calls
	c.instr += n
	g.last = c
	g.total += m + n
	g.nsamp += msamp + calls
	return c
}

// leafChild is SampleCall's and SampleLeaf's lookup of the callee's node
// below parent, the path cache's entry k-1, when the cache does not hold
// it: through the child cache, whose hit is written out (child does not
// inline); it makes the node the cache's entry k.
func (g *gstate) leafChild(parent *node, callee *Func, k int) *node {
	h := g.kidSlot(parent, callee)
	c := g.kids[h]
	if c == nil || c.parent != parent || c.fn != callee {
		c = g.miss(parent, callee, h)
	}
	if c.stamp != g.gid {
		c = g.visit(parent, c, callee)
	}
	g.reserve(k + 1)
	g.path, g.fns = g.path[:k+1], g.fns[:k+1]
	g.path[k], g.fns[k] = c, callee
	return c
}

// context returns the node of stack (the no-stack context for an empty
// one). The caller has set g.busy.
func (g *gstate) context(stack []*Func, from int) *node {
	if len(stack) == 0 {
		g.n = 0
		return g.child(&g.root, &noStack) // the root has no counts of its own
	}
	return g.lookup(stack, from)
}

// lookup returns the node of a non-empty stack of which stack[:from] is
// the previous sample's, and makes it the path cache's. Its cost is
// proportional to the part of the stack beyond from: what changed, and
// what the counter does not know is unchanged.
func (g *gstate) lookup(stack []*Func, from int) *node {
	k := len(stack)
	// stack[:i] is the previous sample's: its cached path holds.
	i := min(from, g.n)
	if g.verify {
		g.check(stack, i, from)
	}
	g.n = k
	if k <= i {
		// (Exact mode, mostly: a return, or the entry an entry sample
		// announced.)
		return g.path[k-1]
	}
	// Compared with the cache beyond i: the kept entries of a deeper
	// sample may match too.
	i = same(g.fns[:min(k, len(g.fns))], stack, i)
	if i == k {
		return g.path[k-1]
	}
	return g.walk(stack, i)
}

// check panics if stack[:i], which the counter reports unchanged, is not
// the cached path's (Settings.VerifyPaths). Out of line: its panic would
// make lookup's frame larger.
//
//go:noinline
func (g *gstate) check(stack []*Func, i, from int) {
	for j := range i {
		if g.fns[j] != stack[j] {
			panic(fmt.Sprintf("kprof: agent: stack entry %d is %s, the cached path has %s (from %d)", j, stack[j].Name, g.fns[j].Name, from))
		}
	}
}

// same returns the length of the longest common prefix of fns and stack,
// which share their first i entries; stack is at least as long as fns.
func same(fns, stack []*Func, i int) int {
	// Blocks of entries first, compared as memory (the runtime's
	// vectorised comparison): a recursion that descends again along its
	// previous path compares many entries that match.
	const block = 64
	if len(fns)-i >= block {
		// From a multiple of the block (the entries before i match too):
		// blocks then start at the same place in the cache lines of
		// both. Only when a block follows: otherwise the entries from the
		// multiple up to i, which match, would be compared one by one
		// (exact mode's leaf returns at depth 100 compared up to 63 each).
		j := i &^ (block - 1)
		for ; len(fns)-j >= block; j += block {
			if mem(fns[j:j+block]) != mem(stack[j:j+block]) {
				break
			}
		}
		i = max(i, j)
	}
	// Both of the same length: no bounds checks in the loop.
	for st := stack[:len(fns)]; i < len(fns) && fns[i] == st[i]; {
		i++
	}
	return i
}

// mem returns the memory of fs as a string, for comparisons.
func mem(fs []*Func) string {
	return unsafe.String((*byte)(unsafe.Pointer(unsafe.SliceData(fs))), uintptr(len(fs))*unsafe.Sizeof((*Func)(nil)))
}

// walk is lookup's general case: the cache holds stack[:i] (and no more
// of it); it walks the tree for stack[i:].
func (g *gstate) walk(stack []*Func, i int) *node {
	g.reserve(len(stack))
	// The path in locals while it grows: stores to g would make the
	// compiler load its fields again at each level.
	path, fns := g.path[:len(stack)], g.fns[:len(stack)]
	cur := &g.root
	if i > 0 {
		cur = path[i-1]
	}
	gid := g.gid
	for ; i < len(stack); i++ {
		f := stack[i]
		// The first child (miss moves the child it finds to the front),
		// else g.child, with its cache hit written out (child does not
		// inline).
		c := cur.child
		if c == nil || c.fn != f {
			h := g.kidSlot(cur, f)
			if c = g.kids[h]; c == nil || c.parent != cur || c.fn != f {
				c = g.miss(cur, f, h)
			}
		}
		if c.stamp != gid {
			c = g.visit(cur, c, f)
		}
		cur = c
		path[i], fns[i] = cur, f
	}
	g.path, g.fns = path, fns
	return cur
}

// addCounts adds the counts of src to dst, a node of g's tree.
func (g *gstate) addCounts(dst, src *node) {
	dst.samples += src.samples
	dst.instr += src.instr
	if k := src.calls(); k != 0 {
		*callsOf(dst) += k
	}
	if s := src.recorded(); s != nil && *s != (recCounts{}) {
		d := g.nodes.rec(dst)
		d.samples += s.samples
		d.instr += s.instr
		d.calls += s.calls
	}
}

// merge adds the tree of src to g's tree, making contexts through g's
// caches. With free it also empties src's tree, whose nodes are zeroed
// for its arena to hand out again. It needs no stack of its own: a deep
// recursion's tree is a path as deep.
func (g *gstate) merge(src *gstate, free bool) {
	src.flush()
	root := &src.root
	g.addCounts(&g.root, root)
	dn := &g.root // the node of s's parent in g's tree
	s := root.child
	for s != nil {
		x := g.child(dn, s.fn)
		g.addCounts(x, s)
		if s.stamp != 0 {
			// The stamps of a running goroutine whose tree is merged
			// go with it (take), and overflow contexts stay marked.
			x.stamp = s.stamp
		}
		if s.child != nil {
			dn, s = x, s.child
			continue
		}
		// s has no children: on to its next sibling, or to its parent's,
		// leaving the subtrees that are done.
		for {
			next, up := s.next, s.parent
			if free {
				*s = node{}
			}
			if next != nil {
				s = next
				break
			}
			if up == root {
				s = nil
				break
			}
			s, dn = up, dn.parent
		}
	}
	if free {
		src.root = node{}
		src.nodes.release()
		src.path, src.fns, src.n = src.path[:0], src.fns[:0], 0
		src.last = nil
	}
}

// take gives the calling goroutine's state g, whose tree has just reached
// mergeNodes contexts or a power of two above, the merged tree, if that
// is larger and no one holds a.mu: g's tree is merged into it (the smaller one copied) and it
// becomes g's, the merged tree empty. Goroutines that run one after the
// other (a benchmark's runs, a test binary's tests, -count) then grow one
// tree, not each their own copy of the contexts the ones before them
// made: without it, the second run of fmt's ScanRecursiveInt benchmark in
// exact mode doubled the peak memory (a tree of 4.8 million contexts
// each). The goroutine gives the tree back when it ends (exit, adopt).
// It runs at the end of a sample, once its context is counted: g's path
// cache and latest context point into the tree that is merged; the
// latest context is found again in the new tree, and the next sample
// compares its whole stack.
func (a *CCT) take(g *gstate) {
	g.take = false
	if !a.mu.TryLock() {
		return
	}
	m := a.merged
	if m.nodes.n > g.nodes.n {
		// g's latest context, as the path to it, kept in the path
		// cache's arrays (the sample may have made a path deeper than
		// mergeNodes).
		d := 0
		for x := g.last; x != nil && x.parent != nil; x = x.parent {
			d++
		}
		g.reserve(d)
		fns := g.fns[:d]
		for x, i := g.last, d-1; i >= 0; x, i = x.parent, i-1 {
			fns[i] = x.fn
		}
		hadLast := g.last != nil
		m.merge(g, true) // (empties g's path cache, not its arrays)
		g.swapTrees(m)
		m.root = node{}
		m.path, m.fns, m.n, m.last = m.path[:0], m.fns[:0], 0, nil
		if hadLast {
			// The path cache holds it again; the next sample, with n
			// 0, compares its whole stack with it.
			path := g.path[:d]
			cur := &g.root
			for i, f := range fns {
				cur = g.child(cur, f)
				path[i] = cur
			}
			g.path, g.fns, g.last = path, fns, cur
		}
	}
	a.mu.Unlock()
}

// swapTrees gives g h's tree and h g's, their nodes' arenas with them,
// and clears both child caches, which point into the other tree now.
func (g *gstate) swapTrees(h *gstate) {
	g.root, h.root = h.root, g.root
	for c := g.root.child; c != nil; c = c.next {
		c.parent = &g.root
	}
	for c := h.root.child; c != nil; c = c.next {
		c.parent = &h.root
	}
	g.nodes, h.nodes = h.nodes, g.nodes
	clear(g.kids)
	clear(h.kids)
}

// adopt merges the tree of src into g's and empties src's, as
// merge(src, true) does; when src's tree is the larger, the two trees
// change places first, so that the smaller one is copied: a goroutine
// that ends with millions of contexts (a deep recursive test) does not
// need twice their memory.
func (g *gstate) adopt(src *gstate) {
	if src.nodes.n > g.nodes.n {
		g.flush()
		src.flush()
		g.swapTrees(src)
		g.path, g.fns, g.n, g.last = g.path[:0], g.fns[:0], 0, nil
	}
	g.merge(src, true)
}

// FlushRunning takes in what goroutines still running ran since their last
// sample, estimated in the context of that sample, or as unsampled if they
// never sampled — as exit does when a goroutine ends, so the profile does
// not depend on whether a goroutine finished before the program did.
// Called at program exit; the running goroutines' own trees are only
// read.
func (a *CCT) FlushRunning() { a.flushRunning(false) }

// Snapshot returns the profile of everything counted so far, the running
// goroutines' instructions since their last sample included (as
// FlushRunning takes them), while the program goes on: the tails are
// claimed with the world stopped and no goroutine in the middle of a
// sample or of its exit, so that none is counted twice or lost. Two
// snapshots' difference is what the program counted in between.
func (a *CCT) Snapshot(meta profile.Meta) *profile.Profile {
	a.flushRunning(true)
	return a.Profile(meta)
}

// flushRunning is FlushRunning; with stop, the tails are claimed with the
// world stopped (a running program: its goroutines' counters and last
// contexts change while they run).
func (a *CCT) flushRunning(stop bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	m := a.merged
	// The callback runs with the runtime's list of goroutines locked: it
	// notes what it took in each goroutine's state, and the contexts are
	// made below.
	var unsampledN int64
	restart := func() {}
	for {
		for atomic.LoadInt32(&a.exiting) != 0 {
			runtime.Gosched()
		}
		if !stop {
			break
		}
		restart = a.stopped()
		if atomic.LoadInt32(&a.exiting) == 0 {
			break
		}
		restart()
		restart = func() {}
	}
	counter.FlushOthers(func(stack []*Func, n int64, local unsafe.Pointer) {
		m.total += n
		if g := (*gstate)(local); g != nil && g.owner == a.id && g.last != nil {
			g.flushN += n
			g.flushLast = g.last
			return
		}
		unsampledN += n
	})
	restart()
	if unsampledN > 0 {
		m.child(&m.root, &unsampled).instr += unsampledN
	}
	var path []*Func
	for g := a.all; g != nil; g = g.all {
		if g.flushN == 0 {
			continue
		}
		// The nodes of the path to flushLast stay: a tree is freed only
		// by its goroutine's end, under a.mu.
		path = path[:0]
		for x := g.flushLast; x.parent != nil; x = x.parent {
			path = append(path, x.fn)
		}
		cur := &m.root
		for i := len(path) - 1; i >= 0; i-- {
			cur = m.child(cur, path[i])
		}
		cur.instr += g.flushN
		g.flushN, g.flushLast = 0, nil
	}
}

// Exit implements Profiler: the goroutine's tail goes to its last
// context.
func (a *CCT) Exit(n int64) { a.exit(nil, n) }

// ExitClaim implements counter.ExitClaimer: the tail is claimed with the
// goroutine's state busy, so that a profile read while FlushRunning
// claims the tails of the goroutines still running (stopped) waits until
// it is recorded; it is claimed with claim, which takes the runtime's lock
// of all goroutines, only while FlushRunning runs.
func (a *CCT) ExitClaim(claim func() int64) { a.exit(claim, 0) }

// exit ends the calling goroutine; its tail is n, or what claim returns.
// Its state stays in its slot, for the next goroutine on its g: the
// counts stay in the state's tree, which is merged into the CCT's only
// once it is large (under a.mu) — exit of a goroutine with a small tree
// takes no lock and costs a few instructions.
func (a *CCT) exit(claim func() int64, n int64) {
	g := (*gstate)(*counter.Local())
	if g == nil || g.owner != a.id {
		// The goroutine never registered: what it ran (without a check:
		// small leaves called from uninstrumented code) is unsampled.
		a.mu.Lock()
		if claim != nil {
			n = claim()
		}
		if n > 0 {
			a.merged.total += n
			a.merged.child(&a.merged.root, &unsampled).instr += n
		}
		a.mu.Unlock()
		return
	}
	g.busy = true
	if claim != nil {
		// The runtime's claim, under its lock of all goroutines, so that
		// FlushRunning and an ending goroutine never both take a tail.
		// (Claiming without the lock, counter.ClaimOwn, gave negative
		// totals in -nondeterministic builds: TestNondeterministic.)
		atomic.AddInt32(&a.exiting, 1)
		n = claim()
		atomic.AddInt32(&a.exiting, -1)
	}
	rec := a.recording.Load()
	g.total += n
	if rec {
		g.rtotal += n
	}
	cur := g.last
	if cur == nil {
		if n == 0 {
			// (No context to make.)
			g.busy = false
			return
		}
		cur = g.child(&g.root, &unsampled)
	}
	// What the goroutine ran after its last sample is estimated in the
	// context of that sample, so that the contexts account for every
	// instruction (δb of the sum over contexts is 0).
	cur.instr += n
	if rec {
		g.nodes.rec(cur).instr += n
	}
	g.last = nil
	g.busy = false
	if g.nodes.n >= mergeNodes {
		// Waiting if need be: a large tree left on the g instead would
		// not be there for the goroutine that runs next on another g
		// (take), which would grow a copy of it.
		a.mu.Lock()
		a.merged.adopt(g)
		a.mu.Unlock()
	}
}

// Profile returns the profile of everything sampled so far.
func (a *CCT) Profile(meta profile.Meta) *profile.Profile { return a.profile(meta, false) }

// RecordProfile returns the profile of what was recorded (Record).
func (a *CCT) RecordProfile(meta profile.Meta) *profile.Profile { return a.profile(meta, true) }

// Record implements counter.Recorder's Record.
func (a *CCT) Record(on bool) { a.recording.Store(on) }

// ResetRecord implements counter.Recorder's ResetRecord.
func (a *CCT) ResetRecord() {
	a.mu.Lock()
	defer a.mu.Unlock()
	forget(&a.merged.root)
	a.merged.rtotal, a.merged.rsamp = 0, 0
	restart := a.stopped()
	defer restart()
	for g := a.all; g != nil; g = g.all {
		forget(&g.root)
		g.rtotal, g.rsamp = 0, 0
	}
}

// prune drops the contexts of a profile tree that have no counts below
// them, and reports whether n keeps any.
func prune(n *profile.Node) bool {
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

// forget zeroes the recorded counts of a tree.
func forget(root *node) {
	walkTree(root, func(n *node) {
		if r := n.recorded(); r != nil {
			*r = recCounts{}
		}
	})
}

// walkTree calls f for every node of the tree of root, root included,
// parents before children, with no stack of its own.
func walkTree(root *node, f func(*node)) {
	f(root)
	n := root.child
	for n != nil {
		f(n)
		if n.child != nil {
			n = n.child
			continue
		}
		for n != root && n.next == nil {
			n = n.parent
		}
		if n == root {
			return
		}
		n = n.next
	}
}

func (a *CCT) profile(meta profile.Meta, recorded bool) *profile.Profile {
	a.mu.Lock()
	defer a.mu.Unlock()
	root := &profile.Node{}
	addTree(root, &a.merged.root, recorded)
	p := &profile.Profile{Meta: meta, Root: root}
	// With the world stopped, the states' trees are copied off the heap
	// (allocating on the heap could start a GC, which stops the world
	// itself), into scratch, emptied again below.
	// The caller's own tree, which only it writes, is read as it is:
	// the largest, often (a program's main goroutine).
	sc := a.scratch
	self := (*gstate)(*counter.Local())
	if self != nil && self.owner != a.id {
		self = nil
	}
	restart := a.stopped()
	for g := a.all; g != nil; g = g.all {
		if g != self {
			sc.merge(g, false)
		}
		sc.total += g.total
		sc.nsamp += g.nsamp
		sc.rtotal += g.rtotal
		sc.rsamp += g.rsamp
	}
	restart()
	addTree(root, &sc.root, recorded)
	if self != nil {
		self.flush()
		addTree(root, &self.root, recorded)
	}
	total, nsamp := a.merged.total+sc.total, a.merged.nsamp+sc.nsamp
	if recorded {
		total, nsamp = a.merged.rtotal+sc.rtotal, a.merged.rsamp+sc.rsamp
		prune(root)
	}
	// Emptied: its cache cleared, its nodes need not be zeroed.
	sc.root = node{}
	sc.nodes.release()
	clear(sc.kids)
	sc.total, sc.nsamp, sc.rtotal, sc.rsamp = 0, 0, 0, 0
	p.Meta = a.meta(meta)
	p.TotalInstructions, p.TotalSamples = total, nsamp
	p.Canonicalize()
	return p
}

// meta returns meta with what the agent knows filled in.
func (a *CCT) meta(meta profile.Meta) profile.Meta {
	meta.Mode = a.set.Mode
	meta.Granularity = a.set.Granularity
	meta.Jitter = a.set.Jitter
	meta.Seed = a.set.Seed
	meta.MetricVersion = profile.MetricVersion
	meta.Metric, meta.MetricTable, _ = counter.Metric()
	meta.KprofVersion = Version
	return meta
}

// WriteFinal writes the profile of everything sampled so far to the named
// file, as Profile(meta).WriteFile(path) would, for a program that ends:
// the goroutines' trees move into one (the largest is not copied), which
// is encoded as it is (profile.WriteTreeFile). A profile of millions of
// contexts then takes the memory of one tree, not of three copies of it.
// The goroutines still running lose the context of their last sample
// (what they run after it counts as unsampled), so WriteFinal is for the
// end of a run, after FlushRunning.
func (a *CCT) WriteFinal(path string, meta profile.Meta) error {
	a.mu.Lock()
	m := a.merged
	restart := a.stopped()
	for g := a.all; g != nil; g = g.all {
		m.adopt(g)
		m.total += g.total
		m.nsamp += g.nsamp
		m.rtotal += g.rtotal
		m.rsamp += g.rsamp
		g.total, g.nsamp, g.rtotal, g.rsamp = 0, 0, 0, 0
	}
	restart()
	err := profile.WriteTreeFile(path, a.meta(meta), m.total, m.nsamp, tree{m})
	a.mu.Unlock()
	if errors.Is(err, profile.ErrDuplicate) {
		// Two functions with the same name, file and line (a custom
		// agent's tables, say): the Profile merges them.
		return a.Profile(meta).WriteFile(path)
	}
	return err
}

// tree is a state's tree as a profile.Tree.
type tree struct{ g *gstate }

func (t tree) Root() *node                  { return &t.g.root }
func (tree) First(n *node) *node            { return n.child }
func (tree) Next(n *node) *node             { return n.next }
func (tree) Key(n *node) *Func              { return n.fn }
func (tree) Func(n *node) profile.Func      { return ofunc(n.fn) }
func (tree) Counts(n *node) (s, i, c int64) { return n.samples, n.instr, n.calls() }

func ofunc(f *Func) profile.Func {
	return profile.Func{Name: f.Name, File: f.File, Line: f.Line}
}

// addTree adds the counts of an off-heap tree (the recorded ones if
// recorded) to a profile tree.
func addTree(dst *profile.Node, src *node, recorded bool) {
	// A deep recursion's tree is a path as deep: the pairs still to visit
	// are kept here, not on the goroutine's stack.
	type pair struct {
		dst *profile.Node
		src *node
	}
	todo := []pair{{dst, src}}
	for len(todo) > 0 {
		p := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		dst, src := p.dst, p.src
		if recorded {
			if r := src.recorded(); r != nil {
				dst.Samples += r.samples
				dst.Instructions += r.instr
				dst.Calls += r.calls
			}
		} else {
			dst.Samples += src.samples
			dst.Instructions += src.instr
			dst.Calls += src.calls()
		}
		for c := src.child; c != nil; c = c.next {
			todo = append(todo, pair{dst.Child(ofunc(c.fn)), c})
		}
	}
}

// stopped stops the world with no goroutine in the middle of a sample
// (busy), for a reader of the states' trees that holds a.mu, and returns
// the function that restarts it. A busy goroutine was preempted within a
// few instructions of being done: the world restarts until it is.
func (a *CCT) stopped() (restart func()) {
	// The caller's own state may be busy only if a sample of its own
	// panicked (the exit then still writes the profile).
	self := (*gstate)(*counter.Local())
	for try := 0; ; try++ {
		restart := counter.StopTheWorld()
		var busy *gstate
		for g := a.all; g != nil && busy == nil; g = g.all {
			if g.busy && g != self {
				busy = g
			}
		}
		if busy == nil {
			return restart
		}
		if try >= stuckTries {
			// Only a panic inside the agent leaves a state busy for good
			// (a bug of kprof's, which a recover in the program, such as
			// net/http's, outlived, maybe on several goroutines): read
			// them as they are rather than hang.
			for g := a.all; g != nil; g = g.all {
				if g != self {
					g.busy = false
				}
			}
			restart()
			fmt.Fprintln(os.Stderr, "kprof: internal error: a goroutine's profile stayed busy (a panic inside kprof's agent?): its last samples may be missing; please report it")
			continue
		}
		restart()
		runtime.Gosched()
	}
}

// stuckTries is how many times stopped lets a busy goroutine run before
// it gives up waiting for it: each try stops the world, so many seconds,
// where a preempted sample takes microseconds to finish. (Not a clock:
// reading one here would run counted code on a path taken only when the
// scheduler preempted a sample.)
const stuckTries = 1 << 20

// spinlock guards the CCT's shared state: the list of states, the merged
// tree, and readers of both. It is taken when a goroutine first runs on a
// runtime g, when an ending goroutine merges a large tree, when the
// profile is read, and on the sample path only when a goroutine's tree
// reaches a power of two of at least mergeNodes contexts (take, with
// TryLock: never waiting); unlike sync.Mutex it runs no instrumented code
// and needs no heap.
type spinlock struct{ v int32 }

func (l *spinlock) Lock() {
	for !atomic.CompareAndSwapInt32(&l.v, 0, 1) {
		// (Not runtime.Gosched: the sample may come from code that runs
		// with its P pinned, where the scheduler must not run.)
		counter.Yield()
	}
}

// TryLock takes the lock if it is free.
func (l *spinlock) TryLock() bool { return atomic.CompareAndSwapInt32(&l.v, 0, 1) }

func (l *spinlock) Unlock() { atomic.StoreInt32(&l.v, 0) }
