package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/kprof/kprof/overlap"
	"github.com/kprof/kprof/profile"
)

// crossArch are the programs TestCrossArchitecture builds for amd64, 386
// and arm64 (-tags purego) and profiles in exact mode. Those without
// differ must give identical profiles; for the others, differ names, per
// GOARCH, the prefixes of the functions whose own instructions may differ
// from amd64's, and why.
var crossArch = []struct {
	dir    string
	differ map[string][]string
	why    string
}{
	{dir: "testdata/determinism"},
	{dir: "testdata/progs/branches"},
	{dir: "testdata/progs/chains"},
	{dir: "testdata/progs/clears"},
	{dir: "testdata/progs/closures"},
	{dir: "testdata/progs/defers"},
	{dir: "testdata/progs/fig4"},
	{dir: "testdata/progs/folds"},
	{dir: "testdata/progs/generics"},
	{dir: "testdata/progs/gotos"},
	{dir: "testdata/progs/inlining"},
	{dir: "testdata/progs/iterators"},
	{dir: "testdata/progs/lazy"},
	{dir: "testdata/progs/logic"},
	{dir: "testdata/progs/loops"},
	{dir: "testdata/progs/loopvars"},
	{dir: "testdata/progs/merges"},
	{dir: "testdata/progs/methods"},
	{dir: "testdata/progs/recursion"},
	{dir: "testdata/progs/results"},
	{dir: "testdata/progs/selects"},
	{dir: "testdata/progs/selfloop"},
	{dir: "testdata/progs/strs"},
	{dir: "testdata/progs/switches"},
	{dir: "testdata/progs/yieldwork"},
	{
		dir: "testdata/semantics/gorandom",
		differ: map[string][]string{
			"386":   {"slices.", "encoding/json.", "strings.Compare", "reflect.", "internal/syscall/unix.", "sync/atomic."},
			"arm64": {"internal/syscall/unix.", "sync/atomic.", "reflect."},
		},
		why: "386: the runtime hashes map keys 32 bits at a time, so maps iterate in another order and " +
			"encoding/json sorts its keys with other comparisons; 386 and arm64: reflect's lookup of a " +
			"type by name binary-searches the binary's table of types, which holds other types on each " +
			"architecture (package syscall's are per architecture), and the getrandom system call " +
			"wrapper (maphash's purego seed) is per architecture",
	},
}

// TestCrossArchitecture: the exact and sampled profiles of deterministic programs
// built with -tags purego are the same on amd64 and 386 (run natively, where
// the kernel runs 32-bit binaries), and on arm64 when qemu-aarch64 is
// installed: same contexts, same counts; or they differ only in functions
// whose difference crossArch explains.
func TestCrossArchitecture(t *testing.T) {
	heavy(t)
	if runtime.GOARCH != "amd64" || runtime.GOOS != "linux" {
		t.Skip("runs 386 binaries natively on linux/amd64")
	}
	if testing.Short() {
		t.Skip("builds the instrumented standard library for other GOARCHes")
	}
	kprofBin := buildKprof(t)
	qemu := ""
	for _, q := range []string{"qemu-aarch64", "qemu-aarch64-static"} {
		if p, err := exec.LookPath(q); err == nil {
			qemu = p
			break
		}
	}
	if qemu == "" {
		t.Log("qemu-aarch64 not installed: arm64 not checked")
	}
	native386 := canRun386(t)
	if !native386 && qemu == "" {
		t.Skip("this machine runs neither 386 nor arm64 binaries")
	}
	for i, tc := range crossArch {
		t.Run(filepath.Base(tc.dir), func(t *testing.T) {
			parallelAfter(t, i)
			dir, _ := filepath.Abs(filepath.Join("..", "..", tc.dir))
			// Exact mode, and sample mode at g = 1000 (whose samples
			// fall at the same instructions when the counts agree).
			profiles := func(goarch string, runner ...string) [2]*profile.Profile {
				bin := filepath.Join(t.TempDir(), "prog-"+goarch)
				if out, err := runCmd(dir, []string{"GOARCH=" + goarch}, kprofBin, "build", "-tags", "purego", "-o", bin, "."); err != nil {
					t.Fatalf("GOARCH=%s kprof build: %v\n%s", goarch, err, out)
				}
				var ps [2]*profile.Profile
				for i, mode := range []string{"KPROF_MODE=exact", "KPROF_MODE=sample"} {
					prof := filepath.Join(t.TempDir(), goarch+".kprof")
					args := append(runner, bin)
					cmd := exec.Command(args[0], args[1:]...)
					cmd.Env = append(os.Environ(), mode, "KPROF_GRAN=1000", "KPROF_OUT="+prof)
					if out, err := cmd.CombinedOutput(); err != nil {
						t.Fatalf("%s: %v\n%s", goarch, err, out)
					}
					p, err := profile.ParseFile(prof)
					if err != nil {
						t.Fatal(err)
					}
					ps[i] = p
				}
				return ps
			}
			bases := profiles("amd64")
			base := bases[0]
			others := map[string][2]*profile.Profile{}
			if native386 {
				others["386"] = profiles("386")
			}
			if qemu != "" {
				others["arm64"] = profiles("arm64", qemu)
			}
			for arch, ps := range others {
				p := ps[0]
				allowed, documented := tc.differ[arch]
				if !documented {
					if p.TotalInstructions != base.TotalInstructions {
						t.Errorf("%s: %d instructions, amd64 %d", arch, p.TotalInstructions, base.TotalInstructions)
					}
					if o := overlap.Contexts(base, p); o != 100 {
						t.Errorf("%s: overlap with amd64 %.4f%%, want 100%%", arch, o)
					}
					if o := overlap.Contexts(bases[1], ps[1]); o != 100 || bases[1].TotalInstructions != ps[1].TotalInstructions {
						t.Errorf("%s, sample mode: overlap with amd64 %.4f%%, %d instructions against %d; want 100%% and the same",
							arch, o, ps[1].TotalInstructions, bases[1].TotalInstructions)
					}
					continue
				}
				diff := differingFuncs(base, p)
				var unexplained []string
				for _, f := range diff {
					if !hasAnyPrefix(f, allowed) {
						unexplained = append(unexplained, f)
					}
				}
				if len(unexplained) > 0 {
					t.Errorf("%s: functions differ from amd64 without a documented cause: %v", arch, unexplained)
				}
				t.Logf("%s: %d functions differ from amd64 (%s): %v", arch, len(diff), tc.why, diff)
			}
		})
	}
}

// differingFuncs lists the functions whose own instructions differ
// between a and b.
func differingFuncs(a, b *profile.Profile) []string {
	self := map[string][2]int64{}
	for i, p := range []*profile.Profile{a, b} {
		for _, f := range p.Flat() {
			v := self[f.Func.Name]
			v[i] += f.Self
			self[f.Func.Name] = v
		}
	}
	var out []string
	for name, v := range self {
		if v[0] != v[1] {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// canRun386 reports whether this linux/amd64 machine runs 386 binaries:
// a kernel built without IA-32 emulation refuses them ("exec format
// error"), and qemu-i386 does not run Go's 386 runtime.
func canRun386(t *testing.T) bool {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "probe")
	if out, err := runCmd(dir, []string{"GOARCH=386", "GO111MODULE=off"}, "go", "build", "-o", bin, "main.go"); err != nil {
		t.Fatalf("GOARCH=386 go build: %v\n%s", err, out)
	}
	if err := exec.Command(bin).Run(); err != nil {
		t.Logf("cannot execute 386 binaries here (%v): 386 not checked", err)
		return false
	}
	return true
}
