package counter

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unsafe"
)

// fakeAgent is an agent that keeps what each sample was given.
type fakeAgent struct {
	gran    int64
	samples []got
}

type got struct {
	stack []*Func
	from  int
}

func (r *fakeAgent) Register() int64 { return r.gran }
func (r *fakeAgent) Exit(int64)      {}
func (r *fakeAgent) ReusesSlots()    {}
func (r *fakeAgent) Sample(stack []*Func, from int, n int64) int64 {
	r.samples = append(r.samples, got{append([]*Func(nil), stack...), from})
	return r.gran
}

// fresh starts the test's goroutine state (the plain one) anew, with a
// fakeAgent installed that asks for granularity gran.
func fresh(t *testing.T, gran int64) *fakeAgent {
	t.Helper()
	plain = state{}
	r := &fakeAgent{gran: gran}
	Install(r)
	t.Cleanup(uninstall)
	// The goroutine registers at its first check (which makes its stack
	// buffer); at granularity 0 it also samples there.
	due()
	S(nil)
	r.samples = nil
	// Room for the deepest stack of the tests: entries pushed beyond the
	// buffer are unknown until the next sample grows it.
	grow(st(), 2048)
	return r
}

// uninstall forgets the agent a test installed.
func uninstall() {
	agent, callCounter, exitClaimer, slotReuser, leafSampler, leafBatcher, runBatcher = nil, nil, nil, nil, nil, nil, nil
}

// start installs a on a fresh goroutine state at granularity 0, registers
// (a sample) and pushes f and g.
func start(t *testing.T, a Agent, f, g *Func) {
	plain = state{}
	Install(a)
	t.Cleanup(uninstall)
	due()
	S(nil) // registers
	grow(st(), 64)
	P(f)
	P(g)
}

// due makes the next check take a sample.
func due() { st().Count = 0 }

// TestMarks drives the reified stack through pushes, returns and samples
// and checks the from each sample reports: never beyond the part of the
// stack that is the previous sample's, no mark in a sampled stack, and, to
// pin down the cost, the exact value (the highest mark d-2^j still in
// place below the depth).
func TestMarks(t *testing.T) {
	fs := make([]*Func, 8)
	for i := range fs {
		fs[i] = &Func{Name: fmt.Sprintf("f%d", i)}
	}
	// op: "+k" pushes k frames (of fs[k%8] …), "-k" returns from k, "s"
	// samples (S(nil)), "l" samples as a leaf (S(fs[7])).
	type op struct {
		kind byte
		k    int
	}
	push := func(k int) op { return op{'+', k} }
	pop := func(k int) op { return op{'-', k} }
	s, leaf := op{'s', 0}, op{'l', 0}
	for _, tc := range []struct {
		name  string
		gran  int64
		ops   []op
		froms []int // of the samples after the first
	}{
		// Marks at 9, 8, 6, 2: the stack came back to 5, so 2 is the
		// highest left below the depth.
		{"down-up", 100, []op{push(10), s, pop(5), push(3), s}, []int{3}},
		// Only pushes since: the top mark (9) is in place.
		{"deeper", 100, []op{push(10), s, push(5), s}, []int{10}},
		// Only returns: 984 = 1000-16 is the highest mark below 990, then
		// 478 = 990-512 below 490.
		{"returns", 100, []op{push(1000), s, pop(10), s, pop(500), s}, []int{985, 479}},
		// Nothing changed: the top mark.
		{"same", 100, []op{push(20), s, s, s}, []int{20, 20}},
		// A leaf's sample shows it above the stack: the mark at its
		// entry (10) is above the depth, 9 is in place.
		{"leaf", 100, []op{push(10), leaf, s, leaf}, []int{10, 10}},
		// A return to 0 and a new stack: nothing is the previous one's.
		{"empty", 100, []op{push(10), s, pop(10), push(4), s}, []int{0}},
		// Granularity 0 (exact mode): no marks; the counter reports the
		// depth (each entry and return samples, so the stack below it is
		// the previous sample's, as far as that one reached).
		{"exact", 0, []op{push(3), s, push(1), s, pop(1), s}, []int{4, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := fresh(t, tc.gran)
			var stack []*Func // what the reified stack should hold
			var prev []*Func
			for _, o := range tc.ops {
				switch o.kind {
				case '+':
					for range o.k {
						f := fs[len(stack)%7]
						P(f)
						stack = append(stack, f)
					}
				case '-':
					for range o.k {
						Pop()
						stack = stack[:len(stack)-1]
					}
				case 's', 'l':
					due()
					want := stack
					if o.kind == 'l' {
						S(fs[7])
						want = append(stack[:len(stack):len(stack)], fs[7])
					} else {
						S(nil)
					}
					g := r.samples[len(r.samples)-1]
					for i := range max(len(g.stack), len(want)) {
						if i >= len(g.stack) || i >= len(want) || g.stack[i] != want[i] {
							t.Fatalf("sample %d: %d entries, want %d; they differ from entry %d", len(r.samples), len(g.stack), len(want), i)
						}
					}
					if len(r.samples) > 1 {
						common := 0
						for common < min(len(prev), len(g.stack)) && prev[common] == g.stack[common] {
							common++
						}
						// (The agent reads from as far as the previous
						// sample's stack reached.)
						if min(g.from, len(prev)) > common {
							t.Errorf("sample %d: from %d, but the stacks share %d entries", len(r.samples), g.from, common)
						}
					}
					prev = g.stack
				}
			}
			var froms []int
			for _, g := range r.samples[1:] {
				froms = append(froms, g.from)
			}
			if fmt.Sprint(froms) != fmt.Sprint(tc.froms) {
				t.Errorf("from %v, want %v", froms, tc.froms)
			}
		})
	}
}

// TestParkedSlot: a goroutine's agent slot outlives it with its runtime
// g, for the next goroutine on the g, with an agent that reuses slots; the
// marks of the previous goroutine are put back when the next registers.
func TestParkedSlot(t *testing.T) {
	r := fresh(t, 100)
	f := &Func{Name: "f"}
	slot := Alloc(8)
	due()
	S(f)
	*Local() = slot
	P(f)
	due()
	S(nil)
	goexit()
	// The runtime's part of a goroutine's exit (kprofGoexit), and a new
	// goroutine on the same g.
	plain.Count, plain.Gran, plain.Depth, plain.Known, plain.Local, plain.Done, plain.Dirty = 0, 0, 0, false, nil, 0, 0
	due()
	S(f)
	if *Local() != slot {
		t.Errorf("slot %p after the g's next goroutine registered, want %p (its previous goroutine's)", *Local(), slot)
	}
	if h := hdr(st()); h.parked != nil {
		t.Errorf("the header still holds the slot: it would pass to two goroutines")
	}
	m := uintptr(unsafe.Pointer(&marker))
	for i, e := range plain.Stack[:2] {
		if e == m {
			t.Errorf("stack entry %d still marked after a new goroutine registered", i)
		}
	}
	// (The new goroutine's registration is not a sample: its first one
	// is a granularity later.)
	if n := len(r.samples); n != 2 {
		t.Errorf("%d samples, want 2", n)
	}
}

// callAgent is a fakeAgent that counts calls (CallCounter) and logs each
// sample with its instructions; with leaf set it also takes a small
// leaf's two samples in one call (LeafSampler), logged as the two.
type callAgent struct {
	log   []string
	calls int // SampleLeaf calls
}

type leafAgent struct{ callAgent }

func (r *callAgent) Register() int64 { return 0 }
func (r *callAgent) Exit(int64)      {}
func (r *callAgent) Sample(stack []*Func, from int, n int64) int64 {
	r.log = append(r.log, fmt.Sprintf("S %s from %d n %d", names(stack), from, n))
	return 0
}
func (r *callAgent) SampleCall(stack []*Func, from int, callee *Func, n int64) int64 {
	r.log = append(r.log, fmt.Sprintf("SE %s from %d callee %s n %d", names(stack), from, callee.Name, n))
	return 0
}
func (r *leafAgent) SampleLeaf(stack []*Func, from int, m, n int64) int64 {
	r.calls++
	k := len(stack) - 1
	r.SampleCall(stack[:k], from, stack[k], m)
	return r.Sample(stack, k, n)
}

func names(fs []*Func) string {
	s := "["
	for i, f := range fs {
		if i > 0 {
			s += " "
		}
		s += f.Name
	}
	return s + "]"
}

// TestLeafSampler: at granularity 0, a small leaf's slow path (SED) hands
// both samples to an agent that takes them in one call (LeafSampler), with
// what the two calls would get, and leaves the count as they would.
func TestLeafSampler(t *testing.T) {
	f, g, leaf, other := &Func{Name: "f"}, &Func{Name: "g"}, &Func{Name: "leaf"}, &Func{Name: "other"}
	run := func(a Agent) (log []string, done, count int64) {
		start(t, a, f, g)
		C(7)
		// A leaf of 5 instructions called after the caller ran 7, one of
		// 0 right after it, one whose caller folded 4 into it (k), and a
		// check whose sample names another function than the entry (no
		// single call: the counter takes the two samples).
		for _, c := range []struct {
			k, n  int64
			self  *Func
			extra int64
		}{{0, 5, leaf, 0}, {0, 0, leaf, 0}, {4, 3, leaf, 0}, {0, 2, other, 3}} {
			C(c.extra)
			if D(c.n) {
				SED(c.k, leaf, c.n, c.self)
			}
		}
		Pop()
		C(1)
		if D(0) {
			S(f)
		}
		var log0 []string
		switch r := a.(type) {
		case *callAgent:
			log0 = r.log
		case *leafAgent:
			log0 = r.log
		}
		return log0, st().Done, st().Count
	}
	two := &callAgent{}
	wantLog, wantDone, wantCount := run(two)
	one := &leafAgent{}
	log, done, count := run(one)
	if fmt.Sprint(log) != fmt.Sprint(wantLog) {
		t.Errorf("samples with LeafSampler:\n%s\nwithout:\n%s", strings.Join(log, "\n"), strings.Join(wantLog, "\n"))
	}
	if done != wantDone || count != wantCount {
		t.Errorf("Done %d, Count %d; want %d, %d", done, count, wantDone, wantCount)
	}
	if one.calls != 3 {
		t.Errorf("%d calls of SampleLeaf, want 3 (the leaf sampling itself)", one.calls)
	}
}

// sumAgent is an exact-mode agent that adds up what its samples report
// per stack: instructions, samples and calls, keyed by the stack's names
// (calls by the callee's stack).
//
// It also checks what from claims (Agent.Sample): that the stack is the
// previous sample's up to there, the previous sample's stack being the
// callee's after a SampleCall (the entry it announces). bad records the
// first sample that breaks it.
type sumAgent struct {
	instr, samples, calls map[string]int64
	leafCalls             int // SampleLeaf and SampleLeaves calls
	runCalls              int // SampleEntries and SampleReturns calls
	agentCalls            int // calls of any of its methods but Register and Exit
	prev                  []*Func
	bad                   string
}

// check records in bad a sample whose arguments are not ok.
func (r *sumAgent) check(ok bool, what string, stack []*Func, args ...int64) {
	if !ok && r.bad == "" {
		r.bad = fmt.Sprintf("%s%v at %s", what, args, names(stack))
	}
}

// seen checks from against the previous sample's stack and makes stack,
// with next on top if it is not nil, the previous one.
func (r *sumAgent) seen(stack []*Func, from int, next *Func) {
	if k := min(from, len(stack), len(r.prev)); r.bad == "" && names(stack[:k]) != names(r.prev[:k]) {
		r.bad = fmt.Sprintf("stack %s with from %d after %s", names(stack), from, names(r.prev))
	}
	r.prev = append(r.prev[:0], stack...)
	if next != nil {
		r.prev = append(r.prev, next)
	}
}

func newSumAgent() *sumAgent {
	return &sumAgent{instr: map[string]int64{}, samples: map[string]int64{}, calls: map[string]int64{}}
}

func (r *sumAgent) Register() int64 { return 0 }
func (r *sumAgent) Exit(n int64)    { r.instr["exit"] += n }
func (r *sumAgent) Sample(stack []*Func, from int, n int64) int64 {
	r.agentCalls++
	return r.sample(stack, from, n)
}
func (r *sumAgent) sample(stack []*Func, from int, n int64) int64 {
	r.seen(stack, from, nil)
	r.check(n >= 0, "Sample", stack, n)
	r.instr[names(stack)] += n
	r.samples[names(stack)]++
	return 0
}
func (r *sumAgent) SampleCall(stack []*Func, from int, callee *Func, n int64) int64 {
	r.agentCalls++
	return r.sampleCall(stack, from, callee, n)
}
func (r *sumAgent) sampleCall(stack []*Func, from int, callee *Func, n int64) int64 {
	r.seen(stack, from, callee)
	r.check(n >= 0, "SampleCall", stack, n)
	if n > 0 {
		r.instr[names(stack)] += n
		r.samples[names(stack)]++
	}
	r.calls[names(append(stack[:len(stack):len(stack)], callee))]++
	return 0
}
func (r *sumAgent) SampleLeaf(stack []*Func, from int, m, n int64) int64 {
	r.leafCalls++
	r.agentCalls++
	k := len(stack) - 1
	r.sampleCall(stack[:k], from, stack[k], m)
	return r.sample(stack, len(stack), n)
}

// batchAgent is a sumAgent that takes batches of a leaf's calls.
type batchAgent struct{ *sumAgent }

func (r batchAgent) SampleLeaves(stack []*Func, from int, m, msamp, calls, n int64) int64 {
	r.leafCalls++
	// Instrumented code the agent runs (a check that fires: not a
	// sample, not counted).
	if D(3) {
		S(nil)
	}
	r.agentCalls++
	r.seen(stack[:len(stack)-1], from, nil)
	r.seen(stack, len(stack), nil)
	r.check(m >= 0 && n >= 0 && calls > 0 && 0 <= msamp && msamp <= calls, "SampleLeaves", stack, m, msamp, calls, n)
	k := len(stack) - 1
	r.instr[names(stack[:k])] += m
	r.samples[names(stack[:k])] += msamp
	r.instr[names(stack)] += n
	r.samples[names(stack)] += calls
	r.calls[names(stack)] += calls
	return 0
}

// diffCounts returns the stacks whose counts differ, got against want,
// at most 8 of them, each with runs of one name written once (a deep
// recursion's stacks are long).
func diffCounts(got, want map[string]int64) string {
	var b strings.Builder
	keys := map[string]bool{}
	for k := range got {
		keys[k] = true
	}
	for k := range want {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	slices.Sort(sorted)
	n := 0
	for _, k := range sorted {
		if got[k] == want[k] {
			continue
		}
		if n++; n > 8 {
			b.WriteString("\n\t…")
			break
		}
		fmt.Fprintf(&b, "\n\t%s: %d, want %d", shortStack(k), got[k], want[k])
	}
	return b.String()
}

// shortStack writes a stack's names, "[f g a a a]", with runs of one
// name as one: "[f g a×3]".
func shortStack(k string) string {
	fs := strings.Fields(strings.Trim(k, "[]"))
	var out []string
	for i := 0; i < len(fs); {
		j := i
		for j < len(fs) && fs[j] == fs[i] {
			j++
		}
		if j-i > 1 {
			out = append(out, fmt.Sprintf("%s×%d", fs[i], j-i))
		} else {
			out = append(out, fs[i])
		}
		i = j
	}
	return "[" + strings.Join(out, " ") + "]"
}

// runAgent is a batchAgent that takes runs of entries and of returns too
// (RunBatcher), as the samples they stand for, one by one.
type runAgent struct{ batchAgent }

func (r runAgent) SampleEntries(stack []*Func, from int, ms []int64) int64 {
	r.enterRun()
	d := len(stack) - len(ms)
	r.check(len(ms) > 0 && d >= 0, "SampleEntries", stack, int64(len(ms)))
	for i, m := range ms {
		if i > 0 {
			from = d + i
		}
		r.sampleCall(stack[:d+i], from, stack[d+i], m)
	}
	return 0
}

func (r runAgent) SampleReturns(stack []*Func, from int, ns []int64) int64 {
	r.enterRun()
	r.check(len(ns) > 0 && len(ns) <= len(stack), "SampleReturns", stack, int64(len(ns)))
	for i, n := range ns {
		k := len(stack) - i
		if i > 0 {
			from = k
		}
		r.sample(stack[:k], from, n)
	}
	return 0
}

// enterRun counts a run's call, which runs instrumented code, as
// SampleLeaves does.
func (r runAgent) enterRun() {
	r.runCalls++
	r.agentCalls++
	if D(3) {
		S(nil)
	}
}

// runBatched runs run with an agent called once per sample (two) and with
// one that takes batches (one), and checks that both counted the same per
// stack, that the goroutine's executed instructions were the same at every
// step, and that every sample's from held.
func runBatched(t *testing.T, run func(Agent) []int64) (one, two *sumAgent) {
	t.Helper()
	return runBatchedBy(t, func(a *sumAgent) Agent { return batchAgent{a} }, run)
}

// runBatchedBy is runBatched with the agent that takes batches made by
// batching from a sumAgent.
func runBatchedBy(t *testing.T, batching func(*sumAgent) Agent, run func(Agent) []int64) (one, two *sumAgent) {
	t.Helper()
	two = newSumAgent()
	wantDone := run(two)
	one = newSumAgent()
	done := run(batching(one))
	if fmt.Sprint(done) != fmt.Sprint(wantDone) {
		t.Errorf("executed instructions at each step %v, want %v", done, wantDone)
	}
	for _, c := range []struct {
		what      string
		got, want map[string]int64
	}{{"instructions", one.instr, two.instr}, {"samples", one.samples, two.samples}, {"calls", one.calls, two.calls}} {
		if d := diffCounts(c.got, c.want); d != "" {
			t.Errorf("%s with batches, against without:%s", c.what, d)
		}
	}
	for _, a := range []*sumAgent{one, two} {
		if a.bad != "" {
			t.Errorf("a sample's from or arguments are wrong: %s", a.bad)
		}
	}
	return one, two
}

// TestLeafBatcher: at granularity 0, the calls of a small leaf that follow
// one another from the same stack reach an agent that takes batches
// (LeafBatcher) in one call per batch, and it counts what it would have
// counted from a SampleLeaf per call: per stack, the same instructions,
// samples and calls, and the goroutine the same executed instructions at
// every step. A batch ends at any other sample: another leaf, a call, a
// return, a boundary of the recording, the goroutine's exit.
func TestLeafBatcher(t *testing.T) {
	f, g, h := &Func{Name: "f"}, &Func{Name: "g"}, &Func{Name: "h"}
	leaf, other := &Func{Name: "leaf"}, &Func{Name: "other"}
	run := func(a Agent) (done []int64) {
		start(t, a, f, g)
		call := func(k, extra, n int64, fn *Func) {
			C(extra)
			if D(n) {
				SED(k, fn, n, fn)
			}
			done = append(done, executed())
		}
		for i := range int64(6) {
			call(0, i%3, 2, leaf) // the caller runs 0 instructions before some
		}
		call(0, 1, 3, other)
		call(4, 0, 1, leaf) // folded: the caller's k
		call(0, 2, 1, leaf)
		// A call of h, which calls the leaf, and returns.
		C(3)
		if Due() {
			SE(h)
		}
		d := P(h)
		call(0, 1, 2, leaf)
		call(0, 1, 2, leaf)
		C(2)
		if Due() {
			S(nil)
		}
		R(d)
		call(0, 1, 2, leaf)
		call(0, 1, 2, leaf)
		flushSelf() // (Record's)
		call(0, 0, 2, leaf)
		call(0, 5, 2, leaf)
		// A check that names another function ends the batch too.
		C(1)
		if D(0) {
			S(g)
		}
		call(0, 1, 2, leaf)
		call(0, 1, 2, leaf)
		// Calls of a function that pushes and samples only at its
		// entry and where it returns: batched as a leaf's. h pushes,
		// k pushes lazily and returns before it does (its check names
		// it); the fourth call of h calls the leaf, and a call of h
		// whose body has a check (a sample in its own context) ends
		// its batch but for the calls before.
		callH := func(extra, body int64, inner func()) {
			C(extra)
			if Due() {
				SE(h)
			}
			d := P(h)
			C(body)
			if inner != nil {
				inner()
			}
			if D(1) {
				S(nil)
			}
			R(d)
			done = append(done, executed())
		}
		for i := range int64(5) {
			var inner func()
			if i == 3 {
				inner = func() { call(0, 1, 2, leaf) }
			}
			callH(i%2, i, inner)
		}
		k := &Func{Name: "k"}
		for i := range int64(3) {
			C(i)
			if Due() {
				SE(k)
			}
			if D(2) {
				S(k)
			}
			done = append(done, executed())
		}
		callH(1, 2, func() {
			C(1)
			if Due() {
				S(nil) // a check in h's body
			}
		})
		callH(1, 2, nil)
		callH(0, 2, nil)
		goexit()
		done = append(done, executed(), st().Count)
		return done
	}
	one, two := runBatched(t, run)
	if two.calls["[f g leaf]"] != 14 || two.calls["[f g h leaf]"] != 3 || two.calls["[f g h]"] != 9 || two.calls["[f g k]"] != 3 {
		t.Errorf("calls %v, want 14 of the leaf from g and 3 from h, 9 of h, 3 of k", two.calls)
	}
	// Calls of SampleLeaf and SampleLeaves: a batch starts at the
	// second call of a function from one depth in a row (the counter
	// remembers the last one), and goes to SampleLeaves when anything
	// else is sampled. The leaf 6 times: 2 + 1; other: 1; the leaf
	// twice (from g after other, in h, from g after h, after the flush
	// where it was the last, after S(g)): 2, 2, 2, 1 + 1, 1 + 1; h 5
	// times, the first a SampleCall (h was not the last entry), the
	// second a SampleLeaf that starts a batch, the next three in it, the
	// fourth's leaf call kept with it, handed over with it: 1 + 1 + 1
	// (SampleLeaves of h, and of its leaf); k 3 times: 1 +
	// 1 at the check in h's body; h twice more after that h: 1 + 1.
	if want := 3 + 1 + 2 + 2 + 2 + 2 + 2 + 3 + 2 + 2; one.leafCalls != want {
		t.Errorf("%d calls of SampleLeaf and SampleLeaves, want %d", one.leafCalls, want)
	}
}

// innerCaller runs the calls of TestLeafBatcherInner and its shapes: of
// small leaves, and of h, which pushes and calls leaves. step, if not nil,
// runs after each call.
type innerCaller struct {
	h    *Func
	step func()
}

// leaf calls the small leaf fn, which runs n instructions, after the
// caller's extra.
func (c innerCaller) leaf(extra, n int64, fn *Func) {
	C(extra)
	if D(n) {
		SED(0, fn, n, fn)
	}
	if c.step != nil {
		c.step()
	}
}

// call calls h after the caller's extra instructions: h runs body before
// each of its calls of the leaves, then after before it returns; end, if
// not nil, runs just before h's return check.
func (c innerCaller) call(extra, body int64, leaves []*Func, after int64, end func()) {
	C(extra)
	if Due() {
		SE(c.h)
	}
	d := P(c.h)
	for _, l := range leaves {
		c.leaf(body, 2, l)
	}
	if end != nil {
		end()
	}
	if D(after) {
		S(nil)
	}
	R(d)
	if c.step != nil {
		c.step()
	}
}

// TestLeafBatcherInner: a loop over a function that pushes and calls a
// small leaf (cmp.Less and isNaN) is batched too, the leaf's calls kept
// with the function's whose entry waits; the counts are those of an agent
// called once per sample, as in TestLeafBatcher, whatever ends the batch.
func TestLeafBatcherInner(t *testing.T) {
	f, g, h := &Func{Name: "f"}, &Func{Name: "g"}, &Func{Name: "h"}
	leaf, other := &Func{Name: "leaf"}, &Func{Name: "other"}
	run := func(a Agent) (done []int64) {
		start(t, a, f, g)
		c := innerCaller{h: h, step: func() { done = append(done, executed()) }}
		call, callH := c.leaf, c.call
		one, two := []*Func{leaf}, []*Func{leaf, leaf}
		for i := range int64(6) { // one call of the leaf each
			callH(i%2, i%3, one, i%2, nil)
		}
		for i := range int64(4) { // two
			callH(1, i%2, two, 1, nil)
		}
		callH(1, 1, []*Func{leaf, other}, 1, nil) // another leaf: ends the batch
		for range 3 {
			callH(1, 1, one, 1, nil)
		}
		// A check in h's body after its leaf's calls: the entry and
		// the calls go to the agent before it.
		callH(1, 1, two, 1, func() {
			C(1)
			if Due() {
				S(nil)
			}
		})
		for range 3 {
			callH(0, 1, one, 0, nil)
		}
		// The recording's boundary inside h, and a call of another
		// function from h, after the leaf's calls.
		callH(2, 1, one, 1, flushSelf)
		callH(2, 1, one, 1, func() {
			C(1)
			if Due() {
				SE(other)
			}
			d := P(other)
			if D(1) {
				S(nil)
			}
			R(d)
		})
		for range 3 {
			callH(1, 2, two, 0, nil)
		}
		// Calls of the leaf from the caller, between h's.
		for range 3 {
			callH(1, 1, one, 1, nil)
			call(1, 2, leaf)
		}
		callH(1, 1, one, 1, nil)
		callH(1, 1, one, 1, nil)
		goexit()
		done = append(done, executed(), st().Count)
		return done
	}
	one, two := runBatched(t, run)
	if two.calls["[f g h]"] != 28 || two.calls["[f g h leaf]"] != 36 || two.calls["[f g leaf]"] != 3 {
		t.Errorf("calls %v, want 28 of h, 36 of the leaf from h and 3 from g", two.calls)
	}
	t.Logf("%d calls of the agent, %d without batches", one.agentCalls, two.agentCalls)
	// Without batches, each call of h with one call of the leaf takes
	// three calls of the agent; with them, the loops take a few.
	if 2*one.agentCalls > two.agentCalls {
		t.Errorf("%d calls of the agent with batches, %d without", one.agentCalls, two.agentCalls)
	}
}

// TestLeafBatcherInnerShapes: more shapes around a waiting entry's kept
// leaf calls (from a review), each checked as in TestLeafBatcherInner.
func TestLeafBatcherInnerShapes(t *testing.T) {
	f, g, h := &Func{Name: "f"}, &Func{Name: "g"}, &Func{Name: "h"}
	leaf, other := &Func{Name: "leaf"}, &Func{Name: "other"}
	one := []*Func{leaf}
	c := innerCaller{h: h}
	leafCall, callH := c.leaf, c.call
	for _, tc := range []struct {
		name string
		body func()
	}{
		{"leaf calls after a check in the body", func() {
			for range 3 {
				callH(1, 1, one, 1, nil)
			}
			callH(1, 1, one, 1, func() {
				C(1)
				if Due() {
					S(nil)
				}
				leafCall(1, 2, leaf)
				leafCall(1, 2, leaf)
			})
			callH(1, 1, one, 1, nil)
		}},
		{"leaf calls after a recording boundary", func() {
			for range 3 {
				callH(1, 1, one, 1, nil)
			}
			callH(1, 1, one, 1, func() {
				flushSelf()
				leafCall(1, 2, leaf)
				leafCall(1, 2, leaf)
				leafCall(1, 2, other)
			})
			callH(1, 1, one, 1, nil)
		}},
		{"calls without leaf calls in a batch with some", func() {
			for range 3 {
				callH(1, 1, one, 1, nil)
			}
			callH(1, 1, nil, 1, nil)
			callH(1, 1, one, 1, nil)
			callH(1, 1, nil, 2, nil)
			for range 3 {
				callH(1, 1, []*Func{other}, 1, nil)
			}
			callH(1, 1, one, 1, nil)
		}},
		{"folded charges", func() {
			for i := range int64(8) {
				C(1)
				if Due() {
					SE(h)
				}
				d := P(h)
				for j := range int64(2) {
					if k := 2 + (i+j)%2; DueK(k) {
						SED(k, leaf, 2, leaf)
					}
				}
				if D(1) {
					S(nil)
				}
				R(d)
			}
		}},
		{"the buffer's last entry", func() {
			for len(st().Stack)-st().Depth > 1 {
				P(f)
			}
			for range 5 {
				hd := hdr(st())
				hd.last, hd.lastAt = h, st().Depth // (as a call of h from here leaves them)
				callH(1, 1, one, 1, nil)
			}
		}},
		{"a return inside a range-over-func body", func() {
			it := &Func{Name: "it"}
			for i := range 12 {
				C(1)
				if Due() {
					SE(h)
				}
				d := P(h)
				leafCall(1, 2, leaf)
				var di int
				pushed := i%4 == 3 // (an instrumented iterator)
				if pushed {
					C(1)
					if Due() {
						SE(it)
					}
					di = P(it)
				}
				leafCall(1, 2, leaf)
				C(2)
				if i%3 == 2 {
					if Due() {
						SD(h, d)
					}
				} else if Due() {
					S(nil)
				}
				if pushed {
					R(di)
				}
				R(d)
			}
		}},
		{"a leaf at depth 0 after a batch", func() {
			// A frame unwound without a sample (a runtime error
			// recovered in uninstrumented code), then a small leaf.
			for range 3 {
				leafCall(1, 2, leaf)
			}
			R(0)
			leafCall(1, 2, other)
			C(1)
			if Due() {
				SE(g)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runBatched(t, func(a Agent) []int64 {
				start(t, a, f, g)
				tc.body()
				before := executed()
				goexit()
				return []int64{before, executed(), st().Count}
			})
		})
	}
	// The exit's FlushOthers takes what a goroutine has pending
	// (claimPending) while an entry with leaf calls waits: the counts
	// handed over stay whole and not negative.
	a := newSumAgent()
	start(t, batchAgent{a}, f, g)
	for i := range 8 {
		if i == 7 {
			claimPending()
		}
		C(5)
		if Due() {
			SE(h)
		}
		d := P(h)
		if i == 3 {
			claimPending()
		}
		leafCall(3, 2, leaf)
		if i == 1 || i == 5 {
			claimPending()
			C(1)
		}
		C(4)
		if D(1) {
			S(nil)
		}
		R(d)
	}
	goexit()
	if a.bad != "" {
		t.Errorf("with FlushOthers: %s", a.bad)
	}
}

// recursion runs TestRunBatcher's shapes: fns called one inside the other
// (fns[i%len(fns)] at level i, levels deep), each running pre
// instructions before its call of the next and post(i) after it returns;
// at(i, down) runs at level i before the call (down) and after it.
type recursion struct {
	fns    []*Func
	levels int
	pre    func(i int) int64
	post   func(i int) int64
	at     func(i int, down bool) (unwindTo int)
	step   func()
	unwind int // a panic's: levels above it return without their checks
}

func (r *recursion) run(i int) {
	fn := r.fns[i%len(r.fns)]
	C(r.pre(i))
	if Due() {
		SE(fn)
	}
	d := P(fn)
	if u := r.at(i, true); u >= 0 {
		r.unwind = u
	}
	if i+1 < r.levels && r.unwind < 0 {
		r.run(i + 1)
	}
	if r.unwind >= 0 && i > r.unwind {
		R(d) // (unwound: no check)
		return
	}
	r.unwind = -1
	if u := r.at(i, false); u >= 0 {
		r.unwind = u
	}
	if D(r.post(i)) {
		S(nil)
	}
	R(d)
	if r.step != nil {
		r.step()
	}
}

// TestRunBatcher: at granularity 0, entries nested one in the other and
// returns one frame below the other reach an agent that takes runs
// (RunBatcher) in one call per run, and it counts what it would have
// counted from a sample each: per stack, the same instructions, samples
// and calls, and the goroutine the same executed instructions at every
// step, whatever ends a run: a check in a body, a leaf's call, a lazy
// function, a panic's unwinding, a boundary of the recording, the stack
// buffer's growth, the goroutine's exit.
func TestRunBatcher(t *testing.T) {
	f, g := &Func{Name: "f"}, &Func{Name: "g"}
	a, b, leaf, lazy := &Func{Name: "a"}, &Func{Name: "b"}, &Func{Name: "leaf"}, &Func{Name: "lazy"}
	for _, tc := range []struct {
		name   string
		fns    []*Func
		levels int
		at     func(i int, down bool) int
	}{
		{"recursion", []*Func{a}, 200, nil},
		{"mutual", []*Func{a, b}, 190, nil},
		{"shapes", []*Func{a, a, b}, 250, func(i int, down bool) int {
			switch {
			case down && i == 120, !down && i == 170: // a check in the body
				C(1)
				if Due() {
					S(nil)
				}
			case down && i == 140, !down && i == 150: // a leaf's call
				C(2)
				if D(2) {
					SED(0, leaf, 2, leaf)
				}
			case down && i == 145, !down && i == 130: // a lazy function's
				C(1)
				if Due() {
					SE(lazy)
				}
				if D(1) {
					S(lazy)
				}
			case !down && i == 160, down && i == 249:
				flushSelf()
			case !down && i == 200:
				return 180 // levels 199 to 181 unwind
			case down && i == 220:
				return 210
			}
			return -1
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			one, two := runBatchedBy(t, func(a *sumAgent) Agent { return runAgent{batchAgent{a}} }, func(ag Agent) (done []int64) {
				start(t, ag, f, g)
				r := &recursion{
					fns: tc.fns, levels: tc.levels, unwind: -1,
					pre:  func(i int) int64 { return int64(i % 3) },
					post: func(i int) int64 { return int64(i % 4) },
					at:   tc.at,
					step: func() { done = append(done, executed()) },
				}
				if r.at == nil {
					r.at = func(int, bool) int { return -1 }
				}
				for range 3 {
					r.run(0)
				}
				// Deep again, and the goroutine ends inside.
				r.levels = 160
				r.at = func(i int, down bool) int {
					if down && i == 150 {
						goexit()
						done = append(done, executed(), st().Count)
					}
					return -1
				}
				r.run(0)
				goexit() // (the runs kept since go to the agent)
				return append(done, executed(), st().Count)
			})
			t.Logf("%d calls of the agent (%d runs), %d without runs", one.agentCalls, one.runCalls, two.agentCalls)
			if one.runCalls == 0 || 3*one.agentCalls > two.agentCalls {
				t.Errorf("%d calls of the agent with runs (%d runs), %d without", one.agentCalls, one.runCalls, two.agentCalls)
			}
		})
	}
	// The exit's FlushOthers takes what a goroutine has pending
	// (claimPending) while a run is kept, on the way down and on the way
	// back: the counts handed over stay whole and not negative.
	ag := newSumAgent()
	start(t, runAgent{batchAgent{ag}}, f, g)
	r := &recursion{fns: []*Func{a}, levels: 160, unwind: -1,
		pre:  func(i int) int64 { return 5 },
		post: func(i int) int64 { return 5 },
		at: func(i int, down bool) int {
			if i == 90 || i == 130 {
				claimPending()
				C(1)
			}
			return -1
		},
	}
	r.run(0)
	goexit()
	if ag.bad != "" || ag.runCalls == 0 {
		t.Errorf("with FlushOthers: %q, %d runs", ag.bad, ag.runCalls)
	}
}
