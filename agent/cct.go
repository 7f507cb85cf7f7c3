package agent

import (
	"runtime"
	"sync"
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
}

// node is one calling context of a goroutine's tree.
type node struct {
	fn       *Func
	samples  int64
	instr    int64
	children []*node // few children: a slice beats a map
}

func (n *node) child(f *Func) *node {
	for _, c := range n.children {
		if c.fn == f {
			return c
		}
	}
	c := &node{fn: f}
	n.children = append(n.children, c)
	return c
}

// noStack stands for samples taken with an empty reified stack (code whose
// callers were all uninstrumented and that did not push itself).
var noStack = Func{Name: "(no stack)"}

// gstate is one goroutine's samples. Only its goroutine writes it; the
// mutex (uncontended) lets the program's exit read it consistently.
type gstate struct {
	mu    spinlock
	root  node
	path  []*node // path cache (paper Fig. 9): path[i] is the node of stack[:i+1]
	rng   uint64
	total int64 // instructions this goroutine ran, exactly
	nsamp int64
}

// CCT is the calling-context-tree agent behind both the sampling agent (SA)
// and the exact agent (JP): the exact agent is SA at granularity 1, so that
// every check attributes the instructions since the previous one.
type CCT struct {
	set Settings

	mu     sync.Mutex
	live   map[*gstate]struct{}
	done   node  // merged trees of goroutines that have exited
	total  int64 // instructions of exited goroutines
	nsamp  int64
	closed bool
}

// NewCCT returns a calling-context-tree agent with the given settings.
func NewCCT(set Settings) *CCT {
	if set.Mode == overlap.ModeExact {
		set.Granularity, set.Jitter = 1, 0
	}
	return &CCT{set: set, live: make(map[*gstate]struct{})}
}

func (a *CCT) local() *gstate {
	p := counter.Local()
	if *p == nil {
		g := &gstate{rng: a.set.Seed | 1}
		*p = unsafe.Pointer(g)
		a.mu.Lock()
		a.live[g] = struct{}{}
		a.mu.Unlock()
	}
	return (*gstate)(*p)
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
	r := (x * 2685821657736338717) >> 1
	return a.set.Granularity + int64(r%uint64(a.set.Jitter))
}

// Register implements Profiler.
func (a *CCT) Register() int64 { return a.next(a.local()) }

// Sample implements Profiler.
func (a *CCT) Sample(stack []*Func, n int64) int64 {
	g := a.local()
	g.mu.Lock()
	// Reuse the part of the cached path that the stack still shares.
	i := 0
	for i < len(stack) && i < len(g.path) && g.path[i].fn == stack[i] {
		i++
	}
	g.path = g.path[:i]
	cur := &g.root
	if i > 0 {
		cur = g.path[i-1]
	}
	if len(stack) == 0 {
		cur = cur.child(&noStack) // the root has no counts of its own
	}
	for ; i < len(stack); i++ {
		cur = cur.child(stack[i])
		g.path = append(g.path, cur)
	}
	cur.samples++
	cur.instr += n
	g.total += n
	g.nsamp++
	g.mu.Unlock()
	return a.next(g)
}

// Exit implements Profiler: the goroutine's tree joins the merged one.
func (a *CCT) Exit(n int64) {
	p := counter.Local()
	if *p == nil {
		a.mu.Lock()
		a.total += n
		a.mu.Unlock()
		return
	}
	g := (*gstate)(*p)
	*p = nil
	g.mu.Lock()
	g.total += n
	a.mu.Lock()
	delete(a.live, g)
	merge(&a.done, &g.root)
	a.total += g.total
	a.nsamp += g.nsamp
	a.mu.Unlock()
	g.mu.Unlock()
}

func merge(dst, src *node) {
	dst.samples += src.samples
	dst.instr += src.instr
	for _, c := range src.children {
		merge(dst.child(c.fn), c)
	}
}

// Profile returns the profile of everything sampled so far.
func (a *CCT) Profile(meta overlap.Meta) *overlap.Profile {
	a.mu.Lock()
	defer a.mu.Unlock()
	all := &node{}
	merge(all, &a.done)
	total, nsamp := a.total, a.nsamp
	for g := range a.live {
		g.mu.Lock()
		merge(all, &g.root)
		total += g.total
		nsamp += g.nsamp
		g.mu.Unlock()
	}
	meta.Mode = a.set.Mode
	meta.Granularity = a.set.Granularity
	meta.Jitter = a.set.Jitter
	meta.Seed = a.set.Seed
	meta.MetricVersion = overlap.MetricVersion
	meta.KprofVersion = Version
	p := &overlap.Profile{Meta: meta, Root: convert(all), TotalInstructions: total, TotalSamples: nsamp}
	p.Canonicalize()
	return p
}

func convert(n *node) *overlap.Node {
	o := &overlap.Node{Samples: n.samples, Instructions: n.instr}
	if n.fn != nil {
		o.Func = overlap.Func{Name: n.fn.Name, File: n.fn.File, Line: n.fn.Line}
	}
	for _, c := range n.children {
		o.Children = append(o.Children, convert(c))
	}
	return o
}

// spinlock guards a goroutine's tree. It is taken by its own goroutine on
// every sample and by the exiting program once, so it is never contended
// in practice; unlike sync.Mutex it runs no instrumented code.
type spinlock struct{ v int32 }

func (l *spinlock) Lock() {
	for !atomic.CompareAndSwapInt32(&l.v, 0, 1) {
		runtime.Gosched()
	}
}

func (l *spinlock) Unlock() { atomic.StoreInt32(&l.v, 0) }
