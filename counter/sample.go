package counter

import "unsafe"

// early is the check period of goroutines that run before the agent is
// installed.
const early = 1 << 16

// off is set when the program runs without an agent: no check fires.
var off bool

// Off turns sampling off for the program: instrumented code keeps counting
// but never calls the slow path again (the paper's "No Prof." setting).
func Off() { off = true }

// unknown stands for stack entries lost when a goroutine's stack buffer
// was too small for its depth (they are pushed again on the next call).
var unknown = Func{Name: "(unknown)"}

// S is the sampling slow path, called by a check whose counter reached
// zero. self is the running function if it has not pushed itself (a leaf,
// or a check after the entry block's charge), nil otherwise.
//
//go:noinline
func S(self *Func) {
	// The common case is written out here and in SE, not in a call of
	// sample: a call less per sample made exact mode a tenth faster.
	s := st()
	if s.Dirty < 0 {
		if s.Dirty <= keptEntries {
			// A run: this sample continues one of returns if it is one
			// frame below its last (keepReturn's common case, written
			// out).
			h := hdr(s)
			if s.Dirty == keptReturns && self == nil && s.Depth == h.rnext && h.rret < runLen && s.Depth > 0 {
				h.rp[h.rret] = -s.Count
				h.rret++
				h.rnext--
				return
			}
			if keepReturn(s, self) {
				return
			}
		} else if returned(s, self) {
			return
		}
		settle(s)
	}
	d := s.Depth
	if self != nil {
		d++
	}
	if !ready(s, d) {
		sample(self, nil)
		return
	}
	if self == nil && s.Gran == 0 && d > runMin && runBatcher != nil && s.Dirty == 0 && recursive(s, d-1, s.Stack[d-1]) {
		// The return of a recursion's function (or another sample of
		// it): it starts a run of returns.
		startReturns(s, d)
		return
	}
	n := s.Gran - s.Count
	enterAgent(s)
	if self != nil {
		s.Stack[d-1] = uintptr(unsafe.Pointer(self))
	}
	depth := s.Depth
	s.Depth = d
	g := agent.Sample(stackOf(s, d), fromOf(s, depth), n)
	s.Depth = depth
	if g != 0 {
		mark(s, d)
	}
	leaveAgent(s, n, g)
}

// ready reports whether a sample of a stack of depth d can take the common
// path: the goroutine is registered, the agent installed and not running,
// the stack buffer large enough, and the goroutine on its own stack.
// Large enough means one entry more than the sample's: an entry sample
// comes before its function's push, which must not be lost (in exact
// mode every push follows a sample, and none is).
func ready(s *state, d int) bool {
	return s.Known && !s.InAgent && agent != nil && d < len(s.Stack) && onUserStack()
}

// stackOf returns the first d entries of the reified stack (d at most its
// length).
func stackOf(s *state, d int) []*Func {
	// The entries are *Func: a slice of them, with one bounds check (where
	// unsafe.Slice checked the first entry and the size).
	st := s.Stack[:d]
	return *(*[]*Func)(unsafe.Pointer(&st))
}

// fromOf returns the depth up to which the stack is the previous sample's,
// for a sample whose stack below the running function (or the leaf's own
// entry) has depth entries (see Agent.Sample).
func fromOf(s *state, depth int) int {
	// Pushes do not record what they overwrite (that would cost every
	// call three instructions). At granularity 0 every function entry
	// samples before its push, and every return before its pop, so
	// between two samples the stack only shrank, or grew by the entry the
	// previous sample announced: its entries below the current depth are
	// those of the previous sample, as far as that one reached (the agent
	// knows how far). Otherwise the previous sample marked some of its
	// entries (mark), and the marks pushes have not overwritten tell.
	// (Gran is the granularity the previous sample asked for: 0, and it
	// marked nothing. A new goroutine, whose Gran is 0, puts back the
	// marks of the g's previous one when it registers.)
	if s.Gran == 0 {
		if s.Dirty > 0 {
			// The previous sample showed another entry there (SD).
			depth = min(depth, s.Dirty-1)
			s.Dirty = 0
		}
		return depth
	}
	if h := hdr(s); h.marked != 0 {
		return unmark(s, h, depth)
	}
	return 0
}

// A stack buffer (grow) is preceded by its header: what the counter keeps
// for the runtime g beside its stack. The runtime keeps the buffer when a
// goroutine ends and the next goroutine on the g uses it.
type header struct {
	// parked is the agent's slot (Local) that the g's previous goroutine
	// left, for an agent that reuses slots (SlotReuser).
	parked unsafe.Pointer
	// marked is the depth of the sample that marked its entries
	// d-1, d-2, d-4, …, d-2^j (0: no marks); saved[j] holds the entry
	// the mark at d-2^j replaced.
	marked int
	// What exact mode keeps from the agent for a while (state.Dirty is
	// -1 while it keeps any; settle hands it all over):
	//
	// A batch of calls of one function from one stack (a small leaf's,
	// SED, or a call that sampled nowhere but at its entry and where it
	// returned, SE and S): leaf, called at depth at, calls
	// times since the agent's last sample, which was its call too, with n
	// of its own instructions in all; base is the goroutine's count of
	// pending instructions after the latest call, the batch's part of
	// them, and msamp how many calls the caller ran instructions before.
	leaf        *Func // (nil: none)
	at          int
	calls, n    int64
	base, msamp int64
	// A call whose entry sample waits (SE): entry (nil: none), entered at
	// depth eat with epend of the pending instructions before it. Where
	// the next sample is its return, the call joins the batch (returned).
	entry *Func
	eat   int
	epend int64
	// The calls of one small leaf, inner, that the function whose entry
	// waits makes (at depth iat = eat+1; 0 when no entry waits, or when
	// the buffer could not hold the leaf's entry) before anything else is
	// sampled: icalls of them, with in of their own instructions, imsamp
	// of them after instructions of the function; iend is the count of
	// pending instructions after the latest (the function's part, up to
	// there, is iend-epend-in). Where the call joins the batch, they join
	// the batch's: bicalls, bin, bim (the function's part) and bimsamp (a
	// loop over a comparison that calls a leaf, cmp.Less and isNaN). They
	// are handed over after the function's own counts. inner stays set
	// while either kind is kept (one leaf at a time), nil when none is.
	inner                      *Func
	iat                        int
	icalls, in, imsamp, iend   int64
	bicalls, bin, bim, bimsamp int64
	// last is the function of the latest entry the counter saw at
	// granularity 0, at depth lastAt, and lastLeaf that of the latest
	// small leaf's call, at depth lastLeafAt. A call waits (an entry) or
	// starts a batch (a leaf's) only when it calls that function from
	// that depth again: keeping costs the counter about what a call of
	// the agent does, and pays only where calls repeat (a loop), not
	// where they nest (recursion) or vary. (One of each: a loop over a
	// function that calls a leaf sees the two alternate.)
	last, lastLeaf     *Func
	lastAt, lastLeafAt int
	// A run of a recursion (an agent that takes runs, RunBatcher;
	// Dirty is keptEntries or keptReturns): rent entries kept, each
	// called from the callee of the one before, at depths rat, rat+1,
	// …, the last of rlast; or rret returns (and other samples of a
	// pushed function) kept, each one frame below the one before, at
	// depths rat, rat-1, …; rp[i] is the count of pending instructions
	// at the i-th. A run starts at the entry or the return of a
	// function that is also one of the few below it on the stack
	// (recursive), deep in the stack (runMin): elsewhere, entries that
	// nest and returns that climb make runs too short to pay for
	// keeping them. One kind at a time, and nothing else kept
	// meanwhile.
	rent, rret int
	rat, rnext int     // (rnext: the depth of the run's next sample)
	rlast      uintptr // (a *Func: no write barrier)
	rp         [runLen]int64
	saved      [64]uintptr
}

// runLen is the most entries, or returns, a run keeps; runDepth is how
// far below a function recursive looks for it; runMin is the least depth
// at which a run starts. A run is at most as long as the stack is deep:
// shallow recursions (a tree walk) keep runs of one or two samples, which
// cost more than they save, and deep ones (a list's, a deeply nested
// value's) long ones. (state.Dirty is -1 while anything else is kept.)
const (
	runLen      = 32
	runDepth    = 3
	runMin      = 2 * runLen
	keptEntries = -2 // state.Dirty while a run of entries is kept
	keptReturns = -3 // and while a run of returns is
)

// hdrSize is the size of a header in stack entries.
const hdrSize = unsafe.Sizeof(header{}) / unsafe.Sizeof(uintptr(0))

// hdr returns the header of the goroutine's stack buffer, which must have
// one (grow has made it).
func hdr(s *state) *header {
	return (*header)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(s.Stack)), -int(unsafe.Sizeof(header{}))))
}

// marker is what a mark writes in place of a stack entry: no push writes
// it. Should a mark be left in a stack (a depth restored upward across
// it, which instrumented code does not do), it reads as unknown.
var marker = Func{Name: "(unknown)"}

// mark marks the entries d-1, d-2, d-4, …, d-2^j of a stack of depth d
// just sampled with a granularity other than 0, so that the next sample
// can tell how much of the stack is still this one's (unmark): a sample
// then costs the agent what changed in the stack (paper Fig. 9), not the
// stack's depth, for the price of log2(d) marks.
func mark(s *state, d int) {
	if d == 0 {
		return
	}
	h := hdr(s)
	m := uintptr(unsafe.Pointer(&marker))
	for j, k := 0, 1; k <= d; j, k = j+1, k*2 {
		h.saved[j] = s.Stack[d-k]
		s.Stack[d-k] = m
	}
	h.marked = d
}

// unmark puts back the entries the previous sample marked that are still
// marked, and returns how much of the stack, whose depth is depth (pushed
// entries), is the previous sample's: up to its highest mark still in
// place below depth. An entry at depth p still marked was pushed over by
// no call since: the depth never came back up across p, so it never went
// below it, and the entries up to p are the previous sample's. (With the
// marks halving their distance to the top, a sample whose stack changed in
// its top k entries has a mark within 2k of the change.)
func unmark(s *state, h *header, depth int) int {
	d, from := h.marked, 0
	m := uintptr(unsafe.Pointer(&marker))
	for j, k := 0, 1; k <= d; j, k = j+1, k*2 {
		if p := d - k; p < len(s.Stack) && s.Stack[p] == m {
			s.Stack[p] = h.saved[j]
			if from == 0 && p < depth {
				from = p + 1
			}
		}
	}
	h.marked = 0
	return from
}

// unmarkAll puts back every marked entry and forgets the marks: the next
// sample compares its whole stack.
func unmarkAll(s *state) {
	if len(s.Stack) > 0 {
		if h := hdr(s); h.marked != 0 {
			unmark(s, h, 0)
		}
	}
}

// SD is S for the final check of a return statement inside a
// range-over-func loop body: the function self, which pushed itself at
// depth d, returns once the iterator has returned, and the iterator's
// frames are still on the stack above it.
//
// The entry at depth d may be an iterator's: the sample shows self there,
// and the entry is put back after it. The next sample's stack then differs
// from this one's at d, which the agent is told (fromOf).
func SD(self *Func, d int) {
	s := st()
	depth := s.Depth
	if d >= depth {
		S(self) // (no iterator above: nothing to put back)
		return
	}
	if depth > len(s.Stack) {
		// The iterators' entries the buffer could not hold are
		// unknown: the sample below grows it only up to d.
		grow(s, depth)
	}
	// The entry may hold a mark of an earlier sample: put back first, as
	// the sample below would do after it was read.
	unmarkAll(s)
	entry := s.Stack[d]
	s.Depth = d
	S(self)
	if s.Dirty < 0 {
		settle(s) // (a batch of self's calls, which the next sample would take with entry back)
	}
	s.Depth = depth
	s.Stack[d] = entry
	s.Dirty = d + 1
}

// SL is the slow path of a check that marks no change of calling context
// (a loop header, a MaxPath check). In exact mode (granularity 0) it
// takes no sample: the next check that must attributes the same
// instructions to the same context — a callee's entry check samples in the
// caller's context, a return check in the function's own — and loops run
// without calling the agent. Its test of exact mode inlines into the
// check's slow branch, so that exact mode makes no call per loop iteration.
func SL(self *Func) {
	// (Inside the agent it returns too: no sample there.)
	if s := st(); s.Gran == 0 && s.Known {
		return
	}
	sl(self)
}

//go:noinline
func sl(self *Func) { S(self) }

// SE is the slow path of a function's entry check: what is pending was run
// by the caller, and callee is being called (an agent that counts calls,
// CallCounter, is told). In exact mode, with an agent that takes batches
// (LeafBatcher), the entry of a function called again from the depth of
// the call before waits in the header for the next sample: where that is
// the call's return, the call is a leaf's (returned).
//
//go:noinline
func SE(callee *Func) {
	s := st()
	d := s.Depth
	if s.Dirty == keptEntries {
		// A run of entries that this one continues (keepEntry's common
		// case, written out: a run is kept at granularity 0 and where
		// ready held, which it tests for nothing but the buffer's size).
		if h := hdr(s); d == h.rnext && h.rent < runLen && d < len(s.Stack) && s.Stack[d-1] == h.rlast {
			h.rp[h.rent] = -s.Count
			h.rent++
			h.rnext++
			h.rlast = uintptr(unsafe.Pointer(callee))
			return
		}
	}
	if callCounter == nil || !ready(s, d) {
		sample(nil, callee) // (which settles first)
		return
	}
	if s.Gran == 0 && s.Dirty <= 0 && leafBatcher != nil {
		h := hdr(s)
		if s.Dirty <= keptEntries {
			if keepEntry(s, h, callee, d) {
				return
			}
			settle(s)
		}
		if h.last == callee && h.lastAt == d {
			if s.Dirty < 0 && (h.entry != nil || h.leaf != nil && (h.leaf != callee || h.at != d)) {
				settle(s) // (a call the callee is nested in, or a batch of another)
			}
			p := s.Gran - s.Count
			h.entry, h.eat, h.epend, h.iend = callee, d, p, p
			if d+1 < len(s.Stack) {
				h.iat = d + 1 // (see SED)
			}
			s.Dirty = -1
			return
		}
		h.last, h.lastAt = callee, d
		if d >= runMin && runBatcher != nil && s.Dirty == 0 && recursive(s, d, uintptr(unsafe.Pointer(callee))) {
			startEntries(s, h, callee, d)
			return
		}
	}
	if s.Dirty < 0 {
		settle(s)
	}
	n := s.Gran - s.Count
	enterAgent(s)
	g := callCounter.SampleCall(stackOf(s, d), fromOf(s, d), callee, n)
	if g != 0 {
		mark(s, d)
	}
	leaveAgent(s, n, g)
}

// SED is the slow path of a function's entry check fused with its final
// check, where it returns or panics n instructions later (n ≥ 0: all it
// ran), with no check between them: "if D(n) { SED(0, callee, n, self) }"
// is "if Due() { SE(callee) }; if D(n) { S(self) }" (a small leaf, or the
// entry block of a function that returns). The charge made the count due,
// so the final check is; the entry check was if the count was due before
// the charge (with n ≥ 0 it never is unless the final check is too).
//
// k is charged first: what a caller accumulated (DueK) when kprof's
// compiler inlined the function into it and moved its charges to the
// caller's accumulator (package toolchain, KprofFoldLate); the check then
// compares the count with the accumulator, and k holds n too.
//
// At granularity 0 (exact mode) both checks always fire, and an agent
// that takes both samples in one call (LeafSampler) gets one call: a
// small leaf's call then costs one crossing into the agent, not two. An
// agent that also takes a batch of such calls (LeafBatcher) gets none
// for the calls of the same leaf from the same context that follow,
// without a sample between them (a loop over a getter, a comparison, a
// hash step): the counter adds them up, and hands them over before the
// goroutine's next sample (settle).
//
//go:noinline
func SED(k int64, callee *Func, n int64, self *Func) {
	s := st()
	s.Count -= k
	if s.Gran == 0 && self == callee && leafSampler != nil && s.Count+n <= 0 {
		// (Count+n is the count before the leaf's charge: the entry
		// check is due. With n ≥ 0 and a granularity of 0 after it,
		// so is the final one.)
		d := s.Depth
		if s.Dirty < 0 {
			// A batch of this leaf's calls at this depth: no sample
			// since its latest call, so the stack below is the same.
			// (Gran is 0: the pending instructions are -Count.)
			h := hdr(s)
			if h.leaf == self && h.at == d && h.entry == nil {
				p := -s.Count
				if p-n > h.base {
					h.msamp++
				}
				h.calls++
				h.n += n
				h.base = p
				return
			}
			// A call from the function whose entry waits, which
			// pushed itself at eat (at granularity 0 nothing else
			// pushes there without a sample): kept with it (iat; 0
			// is no depth a waiting entry's calls come from).
			if h.iat == d && d != 0 && (h.inner == self || h.inner == nil) {
				p := -s.Count
				if p-n > h.iend { // the function ran instructions before it
					h.imsamp++
				}
				h.icalls++
				h.in += n
				h.iend = p
				if h.icalls == 1 {
					h.inner = self // (a pointer's store costs a test of the write barrier)
				}
				return
			}
		}
		if ready(s, d+1) {
			if s.Dirty < 0 {
				settle(s)
			}
			m := -(s.Count + n) // the caller's part: Gran (0) - count
			enterAgent(s)
			s.Stack[d] = uintptr(unsafe.Pointer(self))
			s.Depth = d + 1 // (as S: instrumented code the agent calls pushes above)
			g := leafSampler.SampleLeaf(stackOf(s, d+1), fromOf(s, d), m, n)
			s.Depth = d
			if g != 0 {
				mark(s, d+1)
			}
			leaveAgent(s, m+n, g)
			if g == 0 && leafBatcher != nil {
				if h := hdr(s); h.lastLeaf == self && h.lastLeafAt == d {
					startBatch(s, self, d)
				} else {
					h.lastLeaf, h.lastLeafAt = self, d
				}
			}
			return
		}
	}
	s.Count += n
	if s.Count <= 0 {
		SE(callee)
	}
	s.Count -= n
	if s.Count <= 0 {
		S(self)
	}
}

// startBatch starts a batch of f's calls at depth d, after a SampleLeaf
// of its call that asked for granularity 0 (d > 0: a call from
// uninstrumented code has no context to batch in).
func startBatch(s *state, f *Func, d int) {
	if d == 0 {
		return
	}
	h := hdr(s)
	h.leaf, h.at = f, d
	h.calls, h.n, h.base, h.msamp = 0, 0, 0, 0
	s.Dirty = -1
}

// returned reports whether the sample S(self) is about to take is the
// first in the function whose entry sample waits (SE): its return, with
// nothing sampled in between but the kept calls of one small leaf, or a
// check in its own body. The call is then a leaf's call, SampleLeaf's two
// samples (and the leaf's calls, handInner), which it takes, or adds to
// the batch of the function's calls from the same stack.
func returned(s *state, self *Func) bool {
	h := hdr(s)
	f, d := h.entry, h.eat
	if f == nil || s.Gran != 0 {
		return false
	}
	// The function on top: pushed at d, or, if it pushes lazily and has
	// not yet, named by self.
	if self == nil && (s.Depth != d+1 || s.Stack[d] != uintptr(unsafe.Pointer(f))) || self != nil && (self != f || s.Depth != d) {
		return false
	}
	h.entry, h.iat = nil, 0
	p := s.Gran - s.Count
	m := min(h.epend, p) // (FlushOthers may have taken the pending instructions)
	// The function's own instructions since its latest call of the
	// inner leaf (or since its entry), after the leaf's calls.
	var in, im int64
	if h.icalls != 0 {
		in, im = innerPart(h, p-m)
	}
	n := p - m - in - im
	if h.leaf == f && h.at == d {
		if m > h.base {
			h.msamp++
		}
		h.calls++
		h.n += n
		h.base = p
		if h.icalls != 0 { // (they join the batch's)
			h.bicalls += h.icalls
			h.bin += in
			h.bim += im
			h.bimsamp += h.imsamp
			h.icalls, h.in, h.imsamp = 0, 0, 0
		}
		return true
	}
	// (No batch: SE settled any other.)
	s.Dirty = 0
	enterAgent(s)
	s.Stack[d] = uintptr(unsafe.Pointer(f))
	depth := s.Depth
	s.Depth = d + 1
	g := leafSampler.SampleLeaf(stackOf(s, d+1), d, m, n)
	if h.icalls > 0 {
		handInner(s, h, d, im, h.imsamp, h.icalls, in)
	}
	s.Depth = depth
	h.icalls, h.in, h.imsamp, h.inner = 0, 0, 0, nil
	if g != 0 {
		mark(s, d+1)
	}
	leaveAgent(s, p, g)
	if g == 0 {
		startBatch(s, f, d)
	}
	return true
}

// innerPart returns the inner leaf's instructions and the function's
// before its calls, of the waiting entry's call (icalls), at most avail in
// all: the leaf's first, should the exit's FlushOthers have taken pending
// instructions (as settleBatch clamps a batch's).
func innerPart(h *header, avail int64) (in, im int64) {
	in = min(h.in, avail)
	return in, min(max(h.iend-h.epend-h.in, 0), avail-in)
}

// handInner hands the agent calls of the header's inner leaf from the
// function at depth d (the stack's entry d, which it pushed): what
// SampleLeaf(stack, d+1, m_i, n_i) would count for each, m the sum of the
// function's m_i before them, msamp how many are above 0, and n that of
// the leaf's own n_i, as SampleLeaves takes them. The caller has entered
// the agent, whose previous sample showed the function at d. Writing the
// entry d+1 is safe: the goroutine's depth is at most d+1 (nothing pushed
// since the calls without a sample).
func handInner(s *state, h *header, d int, m, msamp, calls, n int64) {
	s.Stack[d+1] = uintptr(unsafe.Pointer(h.inner))
	depth := s.Depth
	s.Depth = d + 2
	leafBatcher.SampleLeaves(stackOf(s, d+2), d+1, m, msamp, calls, n)
	s.Depth = depth
}

// settle hands what exact mode kept from the agent (the header's batch,
// waiting entry and their calls of a small leaf) over to it, in that
// order: the first thing any other sample does
// while it keeps some (state.Dirty < 0). The stack below the batch's
// function, and below the waiting entry, is as it was: no sample came
// since, so nothing was pushed below them. The pending instructions after
// theirs are the sample's that follows.
func settle(s *state) {
	h := hdr(s)
	if s.Dirty <= keptEntries {
		s.Dirty = 0
		settleRun(s, h) // (nothing else is kept with a run)
		return
	}
	s.Dirty = 0
	if h.leaf != nil {
		b := settleBatch(s, h)
		h.epend -= min(b, h.epend)
		h.iend -= min(b, h.iend)
	}
	if f := h.entry; f != nil {
		h.entry, h.iat = nil, 0
		p := s.Gran - s.Count
		e := min(h.epend, p)
		in, im := innerPart(h, p-e)
		count := s.Count
		enterAgent(s)
		depth := s.Depth
		s.Depth = h.eat
		callCounter.SampleCall(stackOf(s, h.eat), h.eat, f, e)
		if h.icalls > 0 {
			handInner(s, h, h.eat, im, h.imsamp, h.icalls, in)
			e += in + im
		}
		s.Depth = depth
		s.Done += e
		s.Count = count + e
		s.InAgent = false
	}
	h.icalls, h.in, h.imsamp, h.inner = 0, 0, 0, nil
}

// startEntries starts a run with the entry of callee at depth d (SE):
// nothing else is kept.
func startEntries(s *state, h *header, callee *Func, d int) {
	h.rat, h.rent, h.rp[0], h.rlast = d, 1, -s.Count, uintptr(unsafe.Pointer(callee))
	h.rnext = d + 1
	s.Dirty = keptEntries
}

// startReturns starts a run with the sample of a pushed function at depth
// d (S): nothing else is kept.
func startReturns(s *state, d int) {
	h := hdr(s)
	h.rat, h.rret, h.rp[0], h.rnext = d, 1, -s.Count, d-1
	s.Dirty = keptReturns
}

// keepEntry keeps the entry of callee at depth d (SE) in the header's run
// of entries, if it is nested in the run's last: called by that entry's
// callee, which pushed itself at d-1 (at granularity 0 nothing else
// pushes there without a sample). A full run is handed over, and the
// entry starts the next.
func keepEntry(s *state, h *header, callee *Func, d int) bool {
	if s.Dirty != keptEntries || d != h.rnext || s.Stack[d-1] != h.rlast {
		return false
	}
	if h.rent == runLen {
		settle(s)
		startEntries(s, h, callee, d)
		return true
	}
	h.rp[h.rent] = -s.Count // (granularity 0: the pending instructions)
	h.rent++
	h.rnext++
	h.rlast = uintptr(unsafe.Pointer(callee))
	return true
}

// recursive reports whether f, at depth d of the stack (pushed or about
// to be), is a recursion's: one of the runDepth entries below it holds it
// too. Only there do runs start: elsewhere, entries that nest and returns
// that climb make runs too short to pay for keeping them.
func recursive(s *state, d int, f uintptr) bool {
	if d < runDepth || d > len(s.Stack) {
		return false
	}
	below := s.Stack[d-runDepth : d]
	return below[2] == f || below[1] == f || below[0] == f
}

// keepReturn keeps the sample S(self) is about to take in the header's
// run of returns, if its function pushed itself one frame below the
// run's last (nothing pushed since: every push at granularity 0 follows
// an entry's sample). A full run is handed over, and the sample starts
// the next.
func keepReturn(s *state, self *Func) bool {
	h := hdr(s)
	d := s.Depth
	// (A full run's successor may reach the bottom of the stack: a sample
	// of an empty stack is no run's.)
	if s.Dirty != keptReturns || self != nil || d != h.rnext || d == 0 {
		return false
	}
	if h.rret == runLen {
		settle(s)
		startReturns(s, d)
		return true
	}
	h.rp[h.rret] = -s.Count
	h.rret++
	h.rnext--
	return true
}

// settleRun hands the header's run to the agent: entries (SampleEntries)
// of the functions at depths rat … rat+rent-1, or returns (SampleReturns)
// from depths rat, rat-1, …, each with the instructions pending since the
// one before (clamped: should the exit's FlushOthers have claimed the
// goroutine's pending instructions since, they went to its last context).
func settleRun(s *state, h *header) {
	k, entries := h.rent, h.rent > 0
	if !entries {
		k = h.rret
	}
	h.rent, h.rret = 0, 0
	// The counts become each sample's instructions, in place.
	p := s.Gran - s.Count
	ns := h.rp[:k]
	prev, neg := int64(0), int64(0)
	for i, c := range ns {
		ns[i] = c - prev
		neg |= c - prev
		prev = c
	}
	if neg < 0 || prev > p {
		// Clamped: should the exit's FlushOthers (or FlushRunning) have
		// claimed the goroutine's pending instructions during the run,
		// they went to its last context.
		prev = 0
		kept := int64(0)
		for i, dn := range ns {
			kept += dn // (the count kept, back)
			c := min(kept, p)
			ns[i], prev = max(c-prev, 0), max(c, prev)
		}
	}
	count := s.Count // (instrumented code the agent runs moves it)
	enterAgent(s)
	depth := s.Depth
	if entries {
		d := h.rat + k
		s.Stack[d-1] = h.rlast // (the last callee may not have pushed yet)
		s.Depth = d
		runBatcher.SampleEntries(stackOf(s, d), h.rat, ns)
	} else {
		s.Depth = h.rat
		runBatcher.SampleReturns(stackOf(s, h.rat), h.rat, ns)
	}
	s.Depth = depth
	s.Done += prev
	s.Count = count + prev
	s.InAgent = false
}

// settleBatch hands the header's batch to the agent and returns the
// pending instructions that were the batch's.
func settleBatch(s *state, h *header) int64 {
	at, leaf := h.at, h.leaf
	h.leaf = nil
	if h.calls == 0 {
		return 0
	}
	// (Clamped: should the exit's FlushOthers have claimed the
	// goroutine's pending instructions since, the batch's calls count
	// and its instructions went to the goroutine's last context.)
	b := min(h.base, s.Gran-s.Count)
	n := min(h.n, b)
	in := min(h.bin, b-n) // (the inner leaf's calls, and the function's part before them)
	im := min(h.bim, b-n-in)
	count := s.Count // (instrumented code the agent runs moves it)
	enterAgent(s)
	s.Stack[at] = uintptr(unsafe.Pointer(leaf))
	depth := s.Depth
	s.Depth = at + 1
	leafBatcher.SampleLeaves(stackOf(s, at+1), at, b-n-in-im, h.msamp, h.calls, n)
	if h.bicalls > 0 {
		handInner(s, h, at, im, h.bimsamp, h.bicalls, in)
	}
	s.Depth = depth
	h.calls = 0
	h.bicalls, h.bin, h.bim, h.bimsamp = 0, 0, 0, 0
	// b of the pending instructions are sampled; the goroutine's period
	// goes on.
	s.Done += b
	s.Count = count + b
	s.InAgent = false
	return b
}

// SK is S after charging the k instructions a function accumulated
// locally (DueK). It is not inlined: the charge would read the count
// again in the check's slow branch, and the compiler, which then loads it
// once for both, could no longer compare the count in memory with k (one
// instruction fewer on every check's fast path).
//
//go:noinline
func SK(k int64, self *Func) {
	C(k)
	S(self)
}

// SLK is SL after charging the k instructions a function accumulated
// locally (DueK). In exact mode the loop's next iteration follows without
// a call, as in SL; otherwise it is SK (SL's test failed). The store to
// Known (true already) comes first so that the charge's read of the count
// is not the check's (see SK).
func SLK(k int64, self *Func) {
	if s := st(); s.Gran == 0 && s.Known {
		s.Known = true
		s.Count -= k
		return
	}
	SK(k, self)
}

// CallCounter is implemented by agents that count calls per calling
// context. SampleCall is Sample at a function's entry check: stack is the
// caller's (from as in Agent.Sample), callee the function being entered.
// kprof's exact mode checks at every entry, so the counts are exact there;
// functions without checks (small loop-free leaves) are not counted.
type CallCounter interface {
	SampleCall(stack []*Func, from int, callee *Func, n int64) int64
}

// LeafSampler is implemented by agents that count calls (CallCounter) and
// take a small leaf's two samples at granularity 0 in one call (SED):
// SampleLeaf(stack, from, m, n) is SampleCall(stack[:k], from, stack[k], m)
// followed by Sample(stack, k, n), k = len(stack)-1 — the caller's m
// instructions in the caller's context and the call of the leaf
// stack[k], then the leaf's own n instructions with the leaf on top — and
// returns what that Sample would. The counter calls it only when the
// previous sample asked for granularity 0; an agent implements it only if
// its SampleCall then asks for 0 again (so that the leaf's sample is
// due), as exact mode does.
type LeafSampler interface {
	SampleLeaf(stack []*Func, from int, m, n int64) int64
}

// LeafBatcher is implemented by agents that take a batch of calls at
// granularity 0 in one call (LeafSampler's, which they implement too,
// added up): after a SampleLeaf that returned 0, the counter keeps the
// calls of the same function from the same stack that follow with no
// other sample between them — a small leaf's (SED), or a call sampled
// only at its entry and where it returns (SE, then S) — and hands them
// over before the goroutine's next sample. SampleLeaves(stack, from, m,
// msamp, calls, n) is calls SampleLeaf(stack, from, m_i, n_i) with m the
// sum of the m_i, n that of the n_i, and msamp the number of m_i above 0.
// The counter also keeps the calls of one small leaf that such a call
// makes (a comparison's isNaN), and hands them over with SampleLeaves
// too, after the counts of the call itself: the agent must only add
// them up, as a batch is out of program order anyway. Its result is
// ignored: the sample that follows asks for the granularity.
type LeafBatcher interface {
	SampleLeaves(stack []*Func, from int, m, msamp, calls, n int64) int64
}

// RunBatcher is implemented by agents (LeafBatchers) that take, at
// granularity 0, a run of entries or of returns in one call: the counter
// keeps entry samples each made from the callee of the one before (a
// recursion's descent), and samples of pushed functions each one frame
// below the one before (its returns), with no other sample between them,
// and hands them over before the goroutine's next other sample.
// SampleEntries(stack, from, ms) is SampleCall(stack[:d+i], from_i,
// stack[d+i], ms[i]) for each i in order, d = len(stack)-len(ms), from_0 =
// from and from_i = d+i; SampleReturns(stack, from, ns) is
// Sample(stack[:len(stack)-i], from_i, ns[i]) for each i in order, from_0
// = from and from_i = len(stack)-i. Their results are ignored (the
// sample that follows asks for the granularity), and the slices are the
// counter's: the agent must not keep them.
type RunBatcher interface {
	SampleEntries(stack []*Func, from int, ms []int64) int64
	SampleReturns(stack []*Func, from int, ns []int64) int64
}

func sample(self, callee *Func) {
	s := st()
	if s.InAgent {
		// Agent code the agent's own instrumented callees run: not
		// counted, no sample (the outer sample resets the period).
		s.Count = never
		return
	}
	if s.Dirty < 0 {
		settle(s)
	}
	if agent == nil || !onUserStack() {
		// With profiling off, or on a system stack (g0 runs timer and GC
		// code): no sample; the period ends.
		endPeriod(s, never)
		if agent == nil && !off && onUserStack() {
			// Before the agent is installed (package initialization):
			// look again later; what ran so far is not profiled. The
			// stack buffer is made now so that no push is lost.
			endPeriod(s, early)
			s.Known = true
			if s.Stack == nil {
				grow(s, 0)
			}
		}
		return
	}
	enterAgent(s)
	if s.Stack == nil {
		grow(s, 0)
	}
	n := s.Gran - s.Count
	if !s.Known {
		// First check of this goroutine: register; the instructions it ran
		// so far count towards its first sample. The g's previous
		// goroutine may have left marks, and its agent slot.
		unmarkAll(s)
		if h := hdr(s); s.Local == nil && slotReuser != nil {
			s.Local, h.parked = h.parked, nil
		}
		g := min(agent.Register(), never) // (see leaveAgent)
		s.Known = true
		s.Gran, s.Count = g, g-n
		if s.Count > 0 && (callee == nil || callCounter == nil) {
			s.InAgent = false
			return
		}
		n = g - s.Count
	}
	d := s.Depth
	if self != nil {
		d++
	}
	if d >= len(s.Stack) {
		grow(s, d+1) // (see ready)
	}
	if self != nil {
		s.Stack[d-1] = uintptr(unsafe.Pointer(self))
	}
	stack := stackOf(s, d)
	// Instrumented code the agent calls pushes above the sampled stack.
	depth := s.Depth
	s.Depth = d
	from := fromOf(s, depth) // a leaf's own entry, written above, is not the previous sample's
	var g int64
	if callCounter != nil && callee != nil {
		g = callCounter.SampleCall(stack, from, callee, n)
	} else {
		g = agent.Sample(stack, from, n)
	}
	s.Depth = depth
	if g != 0 {
		mark(s, d)
	}
	leaveAgent(s, n, g)
}

// endPeriod adds the instructions counted since the last sample to those
// the goroutine has executed and starts a new period of g.
func endPeriod(s *state, g int64) {
	s.Done += s.Gran - s.Count
	s.Gran, s.Count = g, g
}

// leaveAgent ends a sample of n instructions: the agent asked for the
// next in g.
func leaveAgent(s *state, n, g int64) {
	if g < 0 || g > never {
		// (kprof's compiler compares the count with constants a loop's
		// charges away from it: no period is longer than never.)
		g = never
	}
	s.Done += n
	s.Gran, s.Count = g, g
	s.InAgent = false
}

// enterAgent marks the goroutine as running the agent. What it has
// executed is frozen first: package testing may read it from another
// goroutine meanwhile (Executed).
func enterAgent(s *state) {
	s.Frozen = s.Done + s.Gran - s.Count
	s.InAgent = true
}

// Executed returns the number of instructions all goroutines have executed
// so far in instrumented code, whether or not sampled (agent code and
// package initialization before the agent is installed excluded). It is
// exact when every other goroutine is blocked or has ended: package
// testing reads it to count a benchmark's instructions per operation.
func Executed() int64 { return executed() }

// minStack is the length of a goroutine's stack buffer at its start (the
// runtime's kprofMinStack): a new g's, and the one a g keeps for its next
// goroutine.
const minStack = 64

// grow enlarges the stack buffer to hold at least d entries; entries the
// buffer could not hold are unknown until pushed again.
func grow(s *state, d int) {
	n := 2 * len(s.Stack)
	if n < minStack {
		n = minStack
	}
	for n < d {
		n *= 2
	}
	if n <= cap(s.Stack) {
		// The buffer of an earlier goroutine on the g, which the runtime
		// cut back to minStack when it ended: beyond the length, entries
		// are written before they are read.
		ns := s.Stack[:n]
		for i := len(s.Stack); i < d; i++ {
			ns[i] = uintptr(unsafe.Pointer(&unknown))
		}
		s.Stack = ns
		return
	}
	// The header first (hdr), then the entries.
	buf := unsafe.Slice((*uintptr)(Alloc((hdrSize+uintptr(n))*unsafe.Sizeof(uintptr(0)))), hdrSize+uintptr(n))
	ns := buf[hdrSize:]
	if len(s.Stack) > 0 {
		copy(buf[:hdrSize], unsafe.Slice((*uintptr)(unsafe.Pointer(hdr(s))), hdrSize))
	}
	copy(ns, s.Stack)
	for i := len(s.Stack); i < d; i++ {
		ns[i] = uintptr(unsafe.Pointer(&unknown))
	}
	// (The old buffer is not freed: off-heap memory never is. The
	// buffer stays with the runtime g, for its later goroutines.)
	s.Stack = ns
}

// goexit runs as each goroutine exits: the instructions it ran since its
// last sample go to the agent.
func goexit() {
	s := st()
	if agent == nil || s.InAgent {
		return
	}
	if s.Dirty < 0 {
		settle(s)
	}
	enterAgent(s)
	// Claimed, not just read: the program's exit may be flushing the
	// goroutines that are still running (FlushOthers) at the same time. An
	// agent that claims inside its own lock (ExitClaimer) records the tail
	// in the same step, so the exit's profile can neither miss it nor
	// count it twice.
	if exitClaimer != nil {
		exitClaimer.ExitClaim(claimPending)
	} else {
		agent.Exit(claimPending())
	}
	if slotReuser != nil && len(s.Stack) > 0 && s.Local != nil {
		// The runtime clears the slot next; the g's next goroutine gets
		// it when it registers.
		hdr(s).parked = s.Local
	}
	s.InAgent = false
}

// SlotReuser is implemented by agents whose per-goroutine slot (Local)
// may pass to a later goroutine: when a goroutine ends, after Exit, the
// counter keeps its slot with its runtime g, which the runtime reuses for
// a later goroutine, and puts it back in that goroutine's slot when it
// registers. The agent then reuses the memory of goroutines that ended
// instead of making more for each new one. The slot must hold memory
// outside the Go heap (Alloc): the collector does not see it while it is
// kept. ReusesSlots does nothing: it marks the agent.
type SlotReuser interface {
	ReusesSlots()
}

// ExitClaimer is implemented by agents that take an exiting goroutine's
// unsampled instructions themselves: ExitClaim calls claim (once, under
// the lock that also guards FlushOthers' callers) and handles the result
// as Exit would.
type ExitClaimer interface {
	ExitClaim(claim func() int64)
}

// Alloc returns size bytes of zeroed memory outside the Go heap, never
// freed. Profiling data kept there does not show in the program's
// allocation statistics (testing.AllocsPerRun) nor cost the collector
// anything. It must never hold pointers to heap memory.
func Alloc(size uintptr) unsafe.Pointer { return alloc(size) }

// FlushOthers reports, for every other goroutine, the instructions it ran
// since its last sample, its current stack and its agent slot, and starts
// a new period for it. The agent calls it when the program exits, so that the profile
// accounts for goroutines still running. f must not block or allocate on
// the heap.
//
// What it reads of a goroutine that is running, or stopped in the middle
// of a function, is what that goroutine stored at its last call or sample:
// kprof's compiler keeps the count and the depth in registers between
// calls. Such a goroutine stores its count again later, over the new
// period: the instructions reported here are then reported again with its
// next sample — at most a granularity's worth per goroutine and call (in
// exact mode, what it ran since its last entry or return). A profile of a
// running program is a snapshot, not an exact count.
func FlushOthers(f func(stack []*Func, n int64, local unsafe.Pointer)) {
	forEachOther(func(stack []uintptr, n int64, local unsafe.Pointer) {
		var fs []*Func
		if len(stack) > 0 {
			fs = unsafe.Slice((**Func)(unsafe.Pointer(&stack[0])), len(stack))
		}
		f(fs, n, local)
	})
}

// Local returns the agent's per-goroutine slot of the calling goroutine.
func Local() *unsafe.Pointer { return &st().Local }

// Paused is what Resume needs to continue counting.
type Paused struct {
	count   int64
	inAgent bool
}

// GoHidden runs f on a new goroutine that the program does not see: in a
// kprof build the runtime counts it as one of its own, so that
// runtime.NumGoroutine, runtime.Stack of all goroutines and the goroutine
// profile leave it out (goroutine-leak checks such as goleak's, which a
// test suite runs after every test, find nothing of the agent's).
func GoHidden(f func()) { goHidden(f) }

// Yield lets other goroutines run while the caller waits for one of them
// (a spinlock of the agent's): runtime.Gosched where the goroutine may be
// rescheduled, else (its P pinned, by sync.Pool in a -nondeterministic
// build) a yield of its OS thread.
func Yield() { yield() }

// SignalDelivered returns the number of channels (signal.Notify's)
// os/signal delivered the signal numbered s to last, the agent's
// included: more than one, and the program handled it too. A receiver of
// s reads the count of its delivery or a later one's. (Outside kprof
// builds: 0.)
func SignalDelivered(s uint32) int { return signalDelivered(s) }

// Suspend stops counting on the calling goroutine until Resume: its checks
// do not fire and what it runs is not counted. The agent suspends counting
// for work outside Sample (writing the profile); package testing suspends
// counting around its own synchronisation and clock readings, so that a
// benchmark's instructions/op holds the code under test alone.
func Suspend() Paused {
	s := st()
	p := Paused{s.Count, s.InAgent}
	if !p.inAgent {
		enterAgent(s)
	}
	s.Count = never
	return p
}

// Resume continues counting where Suspend stopped it.
func Resume(p Paused) {
	s := st()
	// Count first: while InAgent is set, Executed reads Frozen.
	s.Count = p.count
	s.InAgent = p.inAgent
}

// AtExit runs f when the program exits: main returns, os.Exit, or a panic
// that nothing recovered ends it. The exiting goroutine first reports its
// unsampled instructions to the agent, as a goroutine does when it ends.
func AtExit(f func()) {
	addExitHook(func() {
		if st().InAgent {
			return // a panic in the agent itself: its data may be half-written
		}
		goexit()
		endPeriod(st(), st().Gran)
		f()
	})
}

// Recorder is implemented by agents that keep a second set of counts for
// one stretch of the run at a time: package testing records a benchmark's
// timed part and writes it as the benchmark's profile (kprof test
// --profile). Record, ResetRecord and WriteRecord are called with the
// other goroutines of the program blocked or gone.
type Recorder interface {
	// Record turns recording on or off.
	Record(on bool)
	// ResetRecord forgets what was recorded.
	ResetRecord()
	// WriteRecord writes what was recorded, as the profile of name.
	WriteRecord(name string)
}

var recorder Recorder

// SetRecorder connects r (from an init function).
func SetRecorder(r Recorder) { recorder = r }

// Record turns the recorder's recording on or off. The calling goroutine's
// instructions since its last sample are sampled first, on the side of the
// boundary they belong to.
func Record(on bool) {
	if recorder == nil {
		return
	}
	flushSelf()
	p := Suspend()
	recorder.Record(on)
	Resume(p)
}

// flushSelf samples the calling goroutine's instructions since its last
// sample, so that they fall before a boundary of the recording.
func flushSelf() {
	s := st()
	if agent != nil && s.Known && !s.InAgent && onUserStack() {
		if s.Dirty < 0 {
			settle(s)
		}
		if s.Gran-s.Count > 0 {
			sample(nil, nil)
		}
	}
}

// ResetRecord makes the recorder forget what it recorded; the calling
// goroutine's instructions since its last sample are forgotten too.
func ResetRecord() {
	if recorder != nil {
		flushSelf()
		p := Suspend()
		recorder.ResetRecord()
		Resume(p)
	}
}

// WriteRecord has the recorder write what it recorded as the profile of
// name.
func WriteRecord(name string) {
	if recorder != nil {
		p := Suspend()
		recorder.WriteRecord(name)
		Resume(p)
	}
}

// StopTheWorld stops every other goroutine, and returns the function that
// restarts them: an agent reads other goroutines' data in between. Outside
// kprof builds, and where the runtime cannot stop the world, it stops
// nothing.
func StopTheWorld() (restart func()) { return stopTheWorld() }
