package main

import (
	"testing"

	"github.com/kprof/kprof/profile"
)

// TestFigure4 builds the paper's Figure 4 (testdata/progs/fig4, the
// README's example) with the default options, where the compiler inlines
// main.sq into main.sqSum and main.sqSum into main.main, and checks its
// exact profile against what the go/ssa weights give: main.sq 2
// instructions in each of 12,300,000 calls, main.sqSum 250 in each of
// 300,000, main.main an entry of 1, 300,001 loop headers of 2, 300,000
// bodies of 4 and an exit of 2; and that the sampled total is exact.
func TestFigure4(t *testing.T) {
	kprofBin := buildKprof(t)
	bin := kprofBuild(t, kprofBin, "../../testdata/progs/fig4", "-pkgs", "main")
	type counts struct{ self, calls int64 }
	want := map[string]counts{
		"main.sq":    {24_600_000, 12_300_000},
		"main.sqSum": {75_000_000, 300_000},
		"main.main":  {1 + 300_001*2 + 300_000*4 + 2, 1},
	}
	got := map[string]counts{}
	p := runProfile(t, bin, "exact")
	p.Walk(func(stack []profile.Func, n *profile.Node) {
		c := got[stack[len(stack)-1].Name]
		got[stack[len(stack)-1].Name] = counts{c.self + n.Instructions, c.calls + n.Calls}
	})
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: %d instructions in %d calls, want %d in %d", name, got[name].self, got[name].calls, w.self, w.calls)
		}
	}
	if len(got) != len(want) {
		t.Errorf("profile has functions %v, want those of %v", got, want)
	}

	// Sampled, the total is exact too. (main.sq's share is not: inlined
	// into main.sqSum inlined into main.main, its check compares the
	// count without main.sqSum's accumulator, and samples fall in
	// main.sqSum's checks instead.)
	if s := runProfile(t, bin, "sample"); s.TotalInstructions != p.TotalInstructions {
		t.Errorf("sampled: %d instructions in total, exact %d", s.TotalInstructions, p.TotalInstructions)
	}
}
