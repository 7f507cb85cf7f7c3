package main

import (
	"strings"
	"testing"
)

// TestRaceDetector builds a many-goroutine program with kprof build -race
// and runs it in both modes: the race detector watches counter and agent
// (the code kprof links into user binaries) in real use.
func TestRaceDetector(t *testing.T) {
	heavy(t)
	if testing.Short() {
		t.Skip("builds the race-instrumented standard library")
	}
	kprofBin := buildKprof(t)
	bin := kprofBuild(t, kprofBin, "../../testdata/semantics/goroutines", "-race")
	for _, mode := range []string{"sample", "exact"} {
		out, err := runCmd(t.TempDir(), []string{"KPROF_MODE=" + mode, "KPROF_GRAN=50", "KPROF_OUT=" + t.TempDir() + "/p.kprof"}, bin)
		if err != nil || strings.Contains(out, "DATA RACE") {
			t.Errorf("%s mode: %v\n%s", mode, err, out)
		}
	}
}
