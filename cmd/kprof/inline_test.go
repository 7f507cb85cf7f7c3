package main

import (
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// inlineCost matches the inliner's verdict on a function of package main
// under -gcflags=-m=2.
var inlineCost = regexp.MustCompile(`(?m)^\./main\.go:\d+:\d+: (can|cannot) inline (\w+)(?: with cost |: function too complex: cost )(\d+)`)

// inlineCosts builds dir with the go command given and returns the
// inliner's cost of each function of package main, and whether it is
// inlinable.
func inlineCosts(t *testing.T, dir, goCmd string) (costs map[string]int, can map[string]bool) {
	t.Helper()
	abs, _ := filepath.Abs(dir)
	out, err := runCmd(abs, nil, goCmd, "build", "-gcflags=-m=2", "-o", filepath.Join(t.TempDir(), "prog"), ".")
	if err != nil {
		t.Fatalf("%s build -gcflags=-m=2: %v\n%s", goCmd, err, out)
	}
	costs, can = map[string]int{}, map[string]bool{}
	for _, m := range inlineCost.FindAllStringSubmatch(out, -1) {
		costs[m[2]], _ = strconv.Atoi(m[3])
		can[m[2]] = m[1] == "can"
	}
	if len(costs) == 0 {
		t.Fatalf("%s build -gcflags=-m=2 reported no inlining cost:\n%s", goCmd, out)
	}
	return costs, can
}

// TestInliningAsPlain checks that kprof's inliner costs each function of
// testdata/progs/inlining as the stock inliner costs the uninstrumented
// function (within one node), so that instrumentation does not change
// which functions are inlined: the code kprof inserts — charges, checks,
// conditions and switches evaluated again to choose a charge, its
// variables — is free (toolchain/patches/go1.26/compile, kprofInserted). Before
// class and scan, among others, cost 20 to 30 nodes more.
func TestInliningAsPlain(t *testing.T) {
	kprofBin := buildKprof(t)
	const dir = "../../testdata/progs/inlining"
	plain, plainCan := inlineCosts(t, dir, "go")
	kp, kpCan := inlineCosts(t, dir, kprofBin)
	for name, want := range plain {
		if name == "main" {
			continue // its loops check, its calls flush: not the same code
		}
		got, ok := kp[name]
		if !ok {
			t.Errorf("%s: no inlining verdict in the kprof build", name)
			continue
		}
		if d := got - want; d < -1 || d > 1 {
			t.Errorf("%s: inlining cost %d in the kprof build, %d in the plain build", name, got, want)
		}
		if kpCan[name] != plainCan[name] {
			t.Errorf("%s: inlinable %v in the kprof build, %v in the plain build", name, kpCan[name], plainCan[name])
		}
	}
}
