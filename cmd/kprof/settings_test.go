package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestInvalidSettings: an invalid KPROF_* value stops the program before
// main with one line naming the variable and what it accepts, status 2.
func TestInvalidSettings(t *testing.T) {
	kprofBin := buildKprof(t)
	bin := kprofBuild(t, kprofBin, "../../testdata/progs/fig4", "-pkgs", "main")
	for _, tc := range []struct{ env, want string }{
		{"KPROF_MODE=fast", `KPROF_MODE="fast": want sample, exact or off`},
		{"KPROF_GRAN=0", `KPROF_GRAN="0": want an integer >= 1`},
		{"KPROF_JITTER=-1", `KPROF_JITTER="-1": want an integer >= 0`},
		{"KPROF_SEED=x", `KPROF_SEED="x": want an unsigned integer`},
		{"KPROF_MAX_CONTEXTS=0", `KPROF_MAX_CONTEXTS="0": want an integer >= 1`},
	} {
		out, err := runCmd(t.TempDir(), []string{tc.env}, bin)
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 2 {
			t.Errorf("%s: %v, want exit status 2", tc.env, err)
		}
		if strings.TrimSpace(out) != "kprof: "+tc.want {
			t.Errorf("%s: output %q, want the one line %q", tc.env, out, "kprof: "+tc.want)
		}
	}
}
