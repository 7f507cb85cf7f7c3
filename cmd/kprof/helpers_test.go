package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/kprof/kprof/profile"
	"github.com/kprof/kprof/toolchain"
	"github.com/kprof/kprof/toolexec"
)

// TestMain runs the tests with kprof's plan checker on (see
// toolexec.CheckPlansEnv): every package kprof instruments for a test has
// its plans checked as they are made.
func TestMain(m *testing.M) {
	os.Setenv(toolexec.CheckPlansEnv, "1")
	os.Exit(m.Run())
}

// runCmd runs a command and returns its combined output.
func runCmd(dir string, env []string, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

func lookPath(name string) (string, error) { return exec.LookPath(name) }

var (
	kprofOnce sync.Once
	kprofPath string
	kprofErr  error
)

// parallelAfter runs the i'th subtest of a loop beside the others, once
// the first has run alone: the first builds what they all share (kprof's
// linked-in packages for the build's flags, the instrumented standard
// library), which concurrent builds would each build again.
func parallelAfter(t *testing.T, i int) {
	if i > 0 {
		t.Parallel()
	}
}

// heavy runs a test that builds and runs much beside the other heavy
// ones (go test's -parallel of them at a time), once the light tests are
// done: one's single-threaded runs (interpreter oracles, exact-mode
// programs, qemu) overlap another's builds. A heavy test must not change
// the process's environment or write outside its own directories.
func heavy(t *testing.T) { t.Parallel() }

// buildKprof builds the kprof command once per test binary: every
// end-to-end test runs the same kprof, built as kprof's benchmarks and
// a host for a newer release build it (toolchain.KprofCommand), so that
// they share the instrumented packages the go command caches.
func buildKprof(t testing.TB) string {
	t.Helper()
	kprofOnce.Do(func() {
		dir, err := os.MkdirTemp("", "kprof-test-")
		if err != nil {
			kprofErr = err
			return
		}
		kprofPath = filepath.Join(dir, "kprof")
		kprofErr = toolchain.BuildKprof("../..", kprofPath)
	})
	if kprofErr != nil {
		t.Fatal(kprofErr)
	}
	return kprofPath
}

// kprofBuild builds the program in dir with kprof and returns the binary.
func kprofBuild(t testing.TB, kprofBin, dir string, flags ...string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), filepath.Base(dir))
	args := append([]string{"build", "-o", bin}, flags...)
	args = append(args, ".")
	abs, _ := filepath.Abs(dir)
	if out, err := runCmd(abs, nil, kprofBin, args...); err != nil {
		t.Fatalf("kprof build %s: %v\n%s", dir, err, out)
	}
	return bin
}

// runProfile runs bin with KPROF_MODE=mode and returns its profile.
func runProfile(t testing.TB, bin, mode string, env ...string) *profile.Profile {
	t.Helper()
	return runProfileArgs(t, bin, mode, nil, env...)
}

// runProfileArgs is runProfile with command-line arguments.
func runProfileArgs(t testing.TB, bin, mode string, args []string, env ...string) *profile.Profile {
	t.Helper()
	p, _, _ := runProfileRaw(t, bin, mode, args, env...)
	return p
}

// runProfileRaw is runProfileArgs that also returns the profile file's
// bytes and what the program printed.
func runProfileRaw(t testing.TB, bin, mode string, args []string, env ...string) (p *profile.Profile, data []byte, output string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "p.kprof")
	// KPROF_VERIFY_PATHS: the agent checks the stack entries the counter
	// reports unchanged since the previous sample (exact mode trusts them).
	env = append(env, "KPROF_MODE="+mode, "KPROF_OUT="+out, "KPROF_VERIFY_PATHS=1")
	output, err := runCmd("", env, bin, args...)
	if err != nil {
		t.Fatalf("%s: %v\n%s", bin, err, output)
	}
	if data, err = os.ReadFile(out); err != nil {
		t.Fatal(err)
	}
	if p, err = profile.Parse(bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	return p, data, output
}
