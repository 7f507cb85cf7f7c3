package main

import (
	"testing"

	"github.com/kprof/kprof/profile"
)

// TestManyGoroutines: 10,000 goroutines lose no counts. In exact mode the
// instructions attributed to main.work are the same whether the work runs
// in 10,000 goroutines or in one, and every counted instruction of the
// program is attributed to some context (the total is the sum over the
// goroutines' trees).
func TestManyGoroutines(t *testing.T) {
	kprofBin := buildKprof(t)
	bin := kprofBuild(t, kprofBin, "../../testdata/many", "-pkgs", "main")
	par := runProfile(t, bin, "exact")
	seq := runProfileArgs(t, bin, "exact", []string{"-seq"})
	cum := func(p *profile.Profile) int64 {
		for _, fs := range p.Flat() {
			if fs.Func.Name == "main.work" {
				return fs.Cum
			}
		}
		return -1
	}
	if cum(par) != cum(seq) || cum(par) <= 0 {
		t.Errorf("main.work: %d instructions in 10000 goroutines, %d in one", cum(par), cum(seq))
	}
	for _, p := range []*profile.Profile{par, seq} {
		var sum int64
		p.Walk(func(_ []profile.Func, n *profile.Node) { sum += n.Instructions })
		if sum != p.TotalInstructions {
			t.Errorf("total %d, sum over contexts %d: %d instructions lost", p.TotalInstructions, sum, p.TotalInstructions-sum)
		}
	}
}
