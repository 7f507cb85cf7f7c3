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
// bodies of 4 and an exit of 2. Sampled at the default granularity, the
// total is exact too, and main.sq takes its share of main.sqSum's
// instructions (its own and its callee's), 82 of 332 or 24.7 %, within a
// point: main.sq's check, inlined into main.sqSum's inlined body, compares
// the count with main.sqSum's accumulator there (kprofInlined in package
// toolchain). The sampled profile is deterministic: Go 1.26 and 1.27 both
// give main.sq 24,128,335 of main.sqSum's 99,520,466, 24.24 %.
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

	s := runProfile(t, bin, "sample")
	if s.TotalInstructions != p.TotalInstructions {
		t.Errorf("sampled: %d instructions in total, exact %d", s.TotalInstructions, p.TotalInstructions)
	}
	var sq, sqSum int64
	for _, fs := range s.Flat() {
		switch fs.Func.Name {
		case "main.sq":
			sq = fs.Self
		case "main.sqSum":
			sqSum = fs.Cum
		}
	}
	share := 100 * float64(sq) / float64(sqSum)
	t.Logf("sampled: main.sq %d of main.sqSum's %d instructions, %.2f %%", sq, sqSum, share)
	if share < 23.7 || share > 25.7 {
		t.Errorf("sampled: main.sq has %.2f %% of main.sqSum's instructions (%d of %d), want 24.7 ± 1", share, sq, sqSum)
	}
}
