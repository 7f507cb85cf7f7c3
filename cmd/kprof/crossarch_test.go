package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/kprof/kprof/overlap"
)

// TestCrossArchitecture: the exact profile of a deterministic program built
// with -tags purego is the same on amd64 and 386 (run natively), and on
// arm64 when qemu-aarch64 is installed: same contexts, same counts.
func TestCrossArchitecture(t *testing.T) {
	if runtime.GOARCH != "amd64" || runtime.GOOS != "linux" {
		t.Skip("runs 386 binaries natively on linux/amd64")
	}
	if testing.Short() {
		t.Skip("builds the instrumented standard library for other GOARCHes")
	}
	kprofBin := buildKprof(t)
	dir, _ := filepath.Abs("../../testdata/determinism")
	profile := func(goarch string, runner ...string) *overlap.Profile {
		bin := filepath.Join(t.TempDir(), "det-"+goarch)
		if out, err := runCmd(dir, []string{"GOARCH=" + goarch}, kprofBin, "build", "-tags", "purego", "-o", bin, "."); err != nil {
			t.Fatalf("GOARCH=%s kprof build: %v\n%s", goarch, err, out)
		}
		prof := filepath.Join(t.TempDir(), goarch+".kprof")
		args := append(runner, bin)
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Env = append(os.Environ(), "KPROF_MODE=exact", "KPROF_OUT="+prof)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", goarch, err, out)
		}
		p, err := overlap.ParseFile(prof)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	base := profile("amd64")
	others := map[string]*overlap.Profile{"386": profile("386")}
	if q, err := exec.LookPath("qemu-aarch64"); err == nil {
		others["arm64"] = profile("arm64", q)
	} else if q, err := exec.LookPath("qemu-aarch64-static"); err == nil {
		others["arm64"] = profile("arm64", q)
	} else {
		t.Log("qemu-aarch64 not installed: arm64 not checked")
	}
	for arch, p := range others {
		if p.TotalInstructions != base.TotalInstructions {
			t.Errorf("%s: %d instructions, amd64 %d", arch, p.TotalInstructions, base.TotalInstructions)
		}
		if o := overlap.Contexts(base, p); o != 100 {
			t.Errorf("%s: overlap with amd64 %.4f%%, want 100%%", arch, o)
		}
	}
}
