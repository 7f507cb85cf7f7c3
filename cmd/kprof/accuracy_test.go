package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestSampledAgainstExact builds a workload with kprof, records an exact
// and a sampled profile, and compares them with kprof compare: the
// sampled profile must overlap the exact one by at least 95 %.
func TestSampledAgainstExact(t *testing.T) {
	kprofBin := buildKprof(t)
	bin := kprofBuild(t, kprofBin, "../../bench/workloads/jack")
	dir := t.TempDir()
	exact, sampled := filepath.Join(dir, "exact.kprof"), filepath.Join(dir, "sampled.kprof")
	if out, err := runCmd(dir, []string{"KPROF_MODE=exact", "KPROF_OUT=" + exact}, bin, "-n", "5"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if out, err := runCmd(dir, []string{"KPROF_MODE=sample", "KPROF_GRAN=1000", "KPROF_OUT=" + sampled}, bin, "-n", "5"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	out, err := runCmd(dir, nil, kprofBin, "compare", "--min-overlap", "95", exact, sampled)
	if err != nil {
		t.Fatalf("kprof compare --min-overlap 95: %v\n%s", err, out)
	}
	if !strings.HasPrefix(out, "overlap: ") {
		t.Errorf("first line is not the overlap:\n%s", out)
	}
	t.Log(strings.SplitN(out, "\n", 2)[0])
}
