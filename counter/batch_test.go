package counter

import "testing"

// TestLeafBatcherLeavesUnderCall: a batch of a function's calls
// (returned) that another small leaf joins, handed over while that
// function runs again and calls another: the function's stack entry,
// which the batch's leaves are written over for their samples, is what
// the next samples show.
func TestLeafBatcherLeavesUnderCall(t *testing.T) {
	f, g, h := &Func{Name: "f"}, &Func{Name: "g"}, &Func{Name: "h"}
	leaf, other, x := &Func{Name: "leaf"}, &Func{Name: "other"}, &Func{Name: "x"}
	run := func(a Agent) (done []int64) {
		start(t, a, f, g)
		c := innerCaller{h: h, step: func() { done = append(done, executed()) }}
		for range 3 {
			c.call(1, 1, []*Func{leaf}, 1, nil)
			c.leaf(1, 2, x) // another small leaf from g: joins the batch of h
		}
		c.call(1, 1, nil, 1, func() {
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
		c.call(1, 1, nil, 1, nil)
		goexit()
		done = append(done, executed(), st().Count)
		return done
	}
	runBatched(t, run)
}

// TestLeafBatcherLeavesCallerPart: each leaf of a batch is handed over
// with the caller's instructions before its own calls and their samples
// (an agent adds instructions to a context with its samples).
func TestLeafBatcherLeavesCallerPart(t *testing.T) {
	f, g := &Func{Name: "f"}, &Func{Name: "g"}
	l, x := &Func{Name: "l"}, &Func{Name: "x"}
	run := func(a Agent) (done []int64) {
		start(t, a, f, g)
		c := innerCaller{step: func() { done = append(done, executed()) }}
		c.leaf(1, 2, l)
		c.leaf(0, 2, l) // starts batch
		c.leaf(0, 2, l)
		c.leaf(3, 2, x)
		c.leaf(0, 2, l)
		C(1)
		if D(1) {
			S(nil)
		}
		goexit()
		done = append(done, executed(), st().Count)
		return done
	}
	runBatchedBy(t, func(a *sumAgent) Agent { return msampAgent{batchAgent{a}, t} }, run)
}

// msampAgent is a batchAgent that fails the test where SampleLeaves
// gets caller instructions without samples, or samples without them.
type msampAgent struct {
	batchAgent
	t *testing.T
}

func (r msampAgent) SampleLeaves(stack []*Func, from int, m, msamp, calls, n int64) int64 {
	if (m > 0) != (msamp > 0) {
		r.t.Errorf("SampleLeaves %v m=%d msamp=%d calls=%d n=%d: m and msamp disagree", names(stack), m, msamp, calls, n)
	}
	return r.batchAgent.SampleLeaves(stack, from, m, msamp, calls, n)
}
