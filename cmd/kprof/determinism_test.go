package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kprof/kprof/overlap"
	"github.com/kprof/kprof/profile"
)

// TestReproducibleProfiles: a deterministic multi-goroutine program gives
// byte-identical profiles over five runs in sample mode (g = 1000 and
// 10000) and exact mode, with GOMAXPROCS 1 and 2, and with the other core
// kept busy; and so does testdata/progs/folds. The total is the same in
// every mode, and the contexts of a sampled profile estimate it within
// 1e-4 (δb). Code that chooses by the CPU's optional features
// (crypto/sha256: assembly or Go code) runs as on a baseline CPU with
// GODEBUG=cpu.all=off: gorandom's profiles are then those of a machine
// without the features (GODEBUG's cpu options, as a machine that lacks
// them). So are cost profiles.
func TestReproducibleProfiles(t *testing.T) {
	kprofBin := buildKprof(t)
	// What a machine without the optional features of amd64 that
	// crypto, math and the runtime use would have.
	const baseline = "GODEBUG=cpu.avx=off,cpu.avx2=off,cpu.sse41=off,cpu.sse42=off,cpu.ssse3=off,cpu.popcnt=off,cpu.aes=off,cpu.sha=off,cpu.pclmulqdq=off,cpu.bmi1=off,cpu.bmi2=off,cpu.fma=off,cpu.erms=off"
	// (A later setting of GODEBUG replaces the first: the machine's.)
	const pinned = "GODEBUG=cpu.all=off"
	for _, tc := range []struct {
		name  string
		dir   string
		flags []string
		procs []string // settings that must agree: GOMAXPROCS, the CPU's features
	}{
		{"determinism", "../../testdata/determinism", nil, []string{"GOMAXPROCS=1", "GOMAXPROCS=2"}},
		// Map seeds and iteration (encoding/json, fmt), select among
		// ready cases, sync.Pool from several goroutines, math/rand,
		// maphash, crypto's FIPS indicator on reused gs: deterministic
		// mode.
		{"gorandom", "../../testdata/semantics/gorandom", nil, []string{"GOMAXPROCS=2", "GOMAXPROCS=1"}},
		{"gorandom-baseline", "../../testdata/semantics/gorandom", nil, []string{pinned, baseline}},
		{"gorandom-cost", "../../testdata/semantics/gorandom", []string{"-metric", "cost"}, []string{pinned, "GOMAXPROCS=1", baseline}},
		// Small leaves' checks folded into accumulators, also inside
		// inlined bodies: a charge folded where no flush takes it is
		// lost sampled (the total falls short of exact mode's).
		{"folds", "../../testdata/progs/folds", nil, []string{"GOMAXPROCS=1", "GOMAXPROCS=2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reproducible(t, kprofBuild(t, kprofBin, tc.dir, tc.flags...), tc.procs)
		})
	}
}

func reproducible(t *testing.T, bin string, procs []string) {
	run := func(env ...string) []byte {
		out := filepath.Join(t.TempDir(), "p.kprof")
		if o, err := runCmd("", append(append([]string{procs[0]}, env...), "KPROF_OUT="+out), bin); err != nil {
			t.Fatalf("%v: %v\n%s", env, err, o)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	totals := map[string]int64{}
	for _, setting := range [][]string{
		// At g = 500 an earlier build wrote no profile: its total was
		// negative, about -2^62 (the "never" period leaked into a count),
		// and the writer refused it. Kept as a regression test.
		{"KPROF_MODE=sample", "KPROF_GRAN=500"},
		{"KPROF_MODE=sample", "KPROF_GRAN=1000"},
		{"KPROF_MODE=sample", "KPROF_GRAN=10000"},
		{"KPROF_MODE=exact"},
	} {
		first := run(setting...)
		for i := 0; i < 4; i++ {
			if got := run(setting...); !bytes.Equal(got, first) {
				t.Errorf("%v: run %d differs from run 1", setting, i+2)
			}
		}
		for _, procs := range procs[1:] {
			if got := run(append(setting, procs)...); !bytes.Equal(got, first) {
				t.Errorf("%v %s: differs from the first setting", setting, procs)
			}
		}
		busy := exec.Command("sh", "-c", "while :; do :; done")
		if err := busy.Start(); err != nil {
			t.Fatal(err)
		}
		got := run(setting...)
		busy.Process.Kill()
		busy.Wait()
		if !bytes.Equal(got, first) {
			t.Errorf("%v: differs with the other core busy", setting)
		}
		p, err := profile.Parse(bytes.NewReader(first))
		if err != nil {
			t.Fatal(err)
		}
		totals[strings.Join(setting, " ")] = p.TotalInstructions
		var sum int64
		p.Walk(func(_ []profile.Func, n *profile.Node) { sum += n.Instructions })
		// Goroutines that end before their first sample have no context
		// for their instructions (they are in the total): δb, the error of
		// the contexts' estimate of the total (paper Table I), stays small.
		if d := overlap.DeltaB(sum, p.TotalInstructions); d > 0 || d < -1e-4 {
			t.Errorf("%v: δb of the contexts %g, want within 1e-4", setting, d)
		}
	}
	var exact int64
	for k, v := range totals {
		if k == "KPROF_MODE=exact" {
			exact = v
		}
	}
	for k, v := range totals {
		if v != exact {
			t.Errorf("%s: total %d instructions, exact mode %d", k, v, exact)
		}
	}
}

// TestNondeterministic: with -nondeterministic, Go's own randomness is back
// and the profiles of testdata/semantics/gorandom differ from run to run
// (which shows that TestReproducibleProfiles tests something).
func TestNondeterministic(t *testing.T) {
	heavy(t)
	if testing.Short() {
		t.Skip("builds the standard library without deterministic mode")
	}
	kprofBin := buildKprof(t)
	bin := kprofBuild(t, kprofBin, "../../testdata/semantics/gorandom", "-nondeterministic")
	seen := map[string]bool{}
	for i := 0; i < 5; i++ {
		out := filepath.Join(t.TempDir(), "p.kprof")
		if o, err := runCmd("", []string{"KPROF_MODE=exact", "KPROF_OUT=" + out}, bin); err != nil {
			t.Fatalf("%v\n%s", err, o)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		seen[string(data)] = true
	}
	if len(seen) < 2 {
		t.Errorf("five runs of a -nondeterministic build gave one profile; want Go's randomness to show")
	}
}
