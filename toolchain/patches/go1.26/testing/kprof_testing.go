//go:build kprofpatch

// Code kprof adds to package testing: the instruction count of the measured part of a benchmark.

package testing

import (
	"sync"
	"sync/atomic"
	"time"

	kprofcounter "github.com/kprof/kprof/counter"
)

// kprofMark reads the instructions all goroutines have executed so far.
func kprofMark() int64 { return kprofcounter.Executed() }

// kprofRecord, kprofResetRecord and kprofWriteRecord drive the agent's
// recording of the timed part (kprof test --profile).
func kprofRecord(on bool)          { kprofcounter.Record(on) }
func kprofResetRecord()            { kprofcounter.ResetRecord() }
func kprofWriteRecord(name string) { kprofcounter.WriteRecord(name) }

// The benchmark clock and RunParallel's synchronisation run instrumented
// code (packages time and sync) that is not the benchmark's: they are not
// counted: how often a WaitGroup spins, or how many times PB.Next takes
// a new grain of iterations, depends on timing.

func kprofTimeNow() highPrecisionTime {
	p := kprofcounter.Suspend()
	t := highPrecisionTimeNow()
	kprofcounter.Resume(p)
	return t
}

func kprofTimeSince(t highPrecisionTime) time.Duration {
	p := kprofcounter.Suspend()
	d := highPrecisionTimeSince(t)
	kprofcounter.Resume(p)
	return d
}

func kprofDone(wg *sync.WaitGroup) {
	p := kprofcounter.Suspend()
	wg.Done()
	kprofcounter.Resume(p)
}

func kprofAdd(n *atomic.Uint64, delta uint64) uint64 {
	p := kprofcounter.Suspend()
	v := n.Add(delta)
	kprofcounter.Resume(p)
	return v
}

func kprofWait(wg *sync.WaitGroup) {
	p := kprofcounter.Suspend()
	wg.Wait()
	kprofcounter.Resume(p)
}

// kprofShare is one RunParallel goroutine's part of b.N: PB.Next takes it
// from n in one grain.
type kprofShare struct {
	n         atomic.Uint64
	grain, bN uint64
}

// kprofSplit divides n iterations among procs goroutines as evenly as
// possible, the first ones taking one more. A goroutine with none has a
// grain of 1, so that its first Next goes past its bN.
func kprofSplit(n, procs int) []kprofShare {
	shares := make([]kprofShare, procs)
	for p := range shares {
		k := uint64(n / procs)
		if p < n%procs {
			k++
		}
		shares[p].grain, shares[p].bN = max(k, 1), k
	}
	return shares
}

// kprofUnfinished reports whether a goroutine left RunParallel's body
// before its Next returned false.
func kprofUnfinished(shares []kprofShare) bool {
	for p := range shares {
		if shares[p].n.Load() <= shares[p].bN {
			return true
		}
	}
	return false
}

// kprofBench is what B records for the instructions/op metric.
type kprofBench struct {
	start     int64 // kprofMark when the timer last started
	count     int64 // instructions while the timer ran in the current runN
	first     int64 // count of the runN(1) that every b.N benchmark starts with
	haveFirst bool
	procs     int // GOMAXPROCS of the first run
}

// kprofReport adds the exact instructions/op metric. A benchmark using
// b.Loop counts the loop alone: its instructions divided by b.N. A b.N
// benchmark also counts, between its timer's start (or ResetTimer) and
// its end, the code around its loop; the difference from its first run
// (b.N = 1) leaves the cost of N-1 iterations of the loop.
func (b *B) kprofReport() {
	if b.N <= 0 || b.extra == nil || b.failed {
		return
	}
	k := &b.kprof
	per := float64(k.count) / float64(b.N)
	if b.loop.n == 0 && b.N > 1 && k.haveFirst {
		per = float64(k.count-k.first) / float64(b.N-1)
	}
	if kprofUnit() == "ns/op-est" {
		b.extra["ns/op-est"] = per / 1000 // the cost metric counts picoseconds
	} else {
		b.extra["instructions/op"] = per
	}
	kprofWriteRecord(b.name)
}

// kprofUnit is the exact metric of the build: instructions/op, or
// ns/op-est under the cost metric (kprof test -metric cost).
func kprofUnit() string {
	if name, _, _ := kprofcounter.Metric(); name == "cost" {
		return "ns/op-est"
	}
	return "instructions/op"
}
