package auto

import (
	"fmt"
	"strconv"
	"sync/atomic"

	"github.com/kprof/kprof/agent"
)

// minEvery is the smallest KPROF_EVERY: each delta profile takes a
// snapshot of the whole profile, which costs what a million instructions
// of the program cost, or more.
const minEvery = 1000000

// everySetting reads KPROF_EVERY: an integer of at least minEvery, or
// unset (0).
func everySetting(getenv func(string) string) (int64, error) {
	v := getenv("KPROF_EVERY")
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < minEvery {
		return 0, fmt.Errorf("KPROF_EVERY=%q: want a number of instructions of at least %d", v, minEvery)
	}
	return n, nil
}

// everyAgent is the CCT agent that also writes a delta profile each time
// the instructions its samples report, summed over the program's
// goroutines, reach a multiple of N (KPROF_EVERY).
//
// The file is written by the goroutine whose sample reaches the multiple,
// in that sample, after the agent counted it: the delta ends at a point
// of the program's own execution, not of the clock. For a program with
// one goroutine that counts (or whose goroutines count one at a time, in
// an order its own synchronisation fixes), that point, and so every
// file, is the same on every run. When goroutines count at the same time,
// which of them reaches the multiple first, and how far the others got
// by then, depends on the scheduler: the files still add up to the run's
// profile, but where one ends and the next begins is not reproducible.
//
// Each file holds what the samples taken since the previous file reported
// (and what goroutines that ended since ran after their last samples):
// the program's other goroutines are not interrupted, their instructions
// since their last samples go to the file of their next. So the
// end-of-run profile is the one written without KPROF_EVERY, and the
// files add up to it. What an ending goroutine ran after its last sample
// counts towards the next file, not towards the sum.
type everyAgent struct {
	*agent.CCT
	n     int64 // N
	total int64 // what the samples reported so far (atomic)
	per   *periodic
}

// Sample implements agent.Profiler.
func (e *everyAgent) Sample(stack []*agent.Func, from int, n int64) int64 {
	g := e.CCT.Sample(stack, from, n)
	e.count(n)
	return g
}

// SampleCall implements counter.CallCounter.
func (e *everyAgent) SampleCall(stack []*agent.Func, from int, callee *agent.Func, n int64) int64 {
	g := e.CCT.SampleCall(stack, from, callee, n)
	e.count(n)
	return g
}

// SampleLeaf implements counter.LeafSampler as its two samples, each
// counted after it, as they were before they were one call: a file then
// ends at the same sample.
func (e *everyAgent) SampleLeaf(stack []*agent.Func, from int, m, n int64) int64 {
	k := len(stack) - 1
	e.SampleCall(stack[:k], from, stack[k], m)
	return e.Sample(stack, k, n)
}

// SampleLeaves implements counter.LeafBatcher; the batch's instructions
// are counted after it, at once.
func (e *everyAgent) SampleLeaves(stack []*agent.Func, from int, m, msamp, calls, n int64) int64 {
	g := e.CCT.SampleLeaves(stack, from, m, msamp, calls, n)
	e.count(m + n)
	return g
}

// SampleEntries implements counter.RunBatcher; the run's instructions
// are counted after it, at once.
func (e *everyAgent) SampleEntries(stack []*agent.Func, from int, ms []int64) int64 {
	g := e.CCT.SampleEntries(stack, from, ms)
	e.count(sum(ms))
	return g
}

// SampleReturns implements counter.RunBatcher; the run's instructions
// are counted after it, at once.
func (e *everyAgent) SampleReturns(stack []*agent.Func, from int, ns []int64) int64 {
	g := e.CCT.SampleReturns(stack, from, ns)
	e.count(sum(ns))
	return g
}

func sum(ns []int64) (t int64) {
	for _, n := range ns {
		t += n
	}
	return t
}

// count adds a sample's n instructions to the total and writes a delta
// profile if the total reached a multiple of N. (Function-style atomics:
// see agent.CCT's exiting.)
func (e *everyAgent) count(n int64) {
	t := atomic.AddInt64(&e.total, n)
	if k := t / e.n; k != (t-n)/e.n {
		e.per.reached(k)
	}
}

// reached writes the delta profile that ends where the total reached the
// k-th multiple of N, unless one written since (another goroutine's, or
// the end of the run's) covers it. A sample that passes several multiples
// writes one file.
func (p *periodic) reached(k int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done || k <= p.boundary {
		return
	}
	p.boundary = k
	// What was sampled so far, not a Snapshot: a snapshot would claim
	// the other running goroutines' instructions since their last
	// samples and restart their sampling periods, so that the samples
	// of a program whose goroutines run at the same time, and its
	// end-of-run profile, would depend on where the files were written.
	// Those instructions go to the file of the sample that reports them.
	p.write(p.a.Profile(meta()))
}
