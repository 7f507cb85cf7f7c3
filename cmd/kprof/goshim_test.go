package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/kprof/kprof/profile"
)

func TestBuildsPlugin(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{[]string{"-buildmode", "plugin", "-o", "p.so", "p.go"}, true},
		{[]string{"-o", "p.so", "-buildmode=plugin", "./p"}, true},
		{[]string{"--buildmode=plugin"}, true},
		{[]string{"-buildmode=pie", "."}, false},
		{[]string{"-o", "-buildmode=plugin", "."}, false}, // -o's value
		{[]string{".", "-buildmode=plugin"}, false},       // after the packages
		{[]string{"-tags", "plugin", "."}, false},
		{nil, false},
	} {
		if got := buildsPlugin(tc.args); got != tc.want {
			t.Errorf("buildsPlugin(%q) = %v, want %v", tc.args, got, tc.want)
		}
	}
}

// kprof test runs test binaries through its goexec, before the user's
// -exec; the go shim carries kprof's flags that change what a build makes.
func TestInstallGoShim(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no go shim on Windows")
	}
	kf, goArgs, _, err := splitArgs([]string{"-run", "X", "-maxpath", "50", "-kprof.v", "-exec", "time -v", ".", "-args", "-exec", "y"})
	if err != nil {
		t.Fatal(err)
	}
	// The shim runs the go command of the toolchain's GOROOT, not the one
	// on PATH (GOTOOLCHAIN may name another release).
	fakeRoot := t.TempDir()
	if err := os.MkdirAll(filepath.Join(fakeRoot, "bin"), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(fakeRoot, "bin", "go"), []byte("#!/bin/sh\n"), 0o777); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	args, env, err := installGoShim(dir, "/opt/k prof/kprof", fakeRoot, kf, runtime.GOOS+"_"+runtime.GOARCH, goArgs)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"-exec", "'/opt/k prof/kprof' goexec time -v", "-run", "X", ".", "-args", "-exec", "y"}
	if !slices.Equal(args, want) {
		t.Errorf("go test's arguments %q, want %q", args, want)
	}
	if len(env) != 1 {
		t.Fatalf("environment %q, want %s only", env, goShimEnv)
	}
	var sh goShim
	if err := json.Unmarshal([]byte(env[0][len(goShimEnv)+1:]), &sh); err != nil {
		t.Fatal(err)
	}
	if sh.Go != filepath.Join(fakeRoot, "bin", "go") {
		t.Errorf("the shim runs %s, want the toolchain's %s", sh.Go, filepath.Join(fakeRoot, "bin", "go"))
	}
	if !slices.Equal(sh.Flags, []string{"-maxpath=50"}) {
		t.Errorf("the shim's kprof flags %q, want -maxpath=50", sh.Flags)
	}
	// A test that runs go with an environment of its own (testscript),
	// PATH kept and the settings not, still reaches the shim with them: the
	// script carries them. (A stand-in kprof prints what it gets.)
	fakeSelf := filepath.Join(t.TempDir(), "it's kprof")
	if err := os.WriteFile(fakeSelf, []byte("#!/bin/sh\nprintf '%s %s' \"$1\" \"$"+goShimEnv+"\"\n"), 0o777); err != nil {
		t.Fatal(err)
	}
	dir2 := t.TempDir()
	if _, env2, err := installGoShim(dir2, fakeSelf, fakeRoot, kf, "", goArgs); err != nil {
		t.Fatal(err)
	} else {
		cmd := exec.Command(filepath.Join(dir2, "goshim", "go"), "version")
		cmd.Env = []string{"PATH=/usr/bin:/bin"}
		got, err := cmd.Output()
		if want := "goshim " + env2[0][len(goShimEnv)+1:]; err != nil || string(got) != want {
			t.Errorf("the shim, run with PATH alone, passed %q (%v), want %q", got, err, want)
		}
	}
	// Tests for another system run through go_GOOS_GOARCH_exec, found on
	// PATH, as go test runs them without an -exec; the user's -exec wins.
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "go_plan9_mips_exec"), []byte("#!/bin/sh\n"), 0o777); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	if args, _, err := installGoShim(t.TempDir(), "/k", fakeRoot, kf, "plan9_mips", []string{"."}); err != nil || args[1] != "/k goexec "+filepath.Join(bin, "go_plan9_mips_exec") {
		t.Errorf("for plan9_mips, -exec %q (%v), want kprof's with go_plan9_mips_exec", args, err)
	}
	if args, _, err := installGoShim(t.TempDir(), "/k", fakeRoot, kf, "plan9_mips", []string{"-exec=qemu", "."}); err != nil || args[1] != "/k goexec qemu" {
		t.Errorf("for plan9_mips with -exec=qemu, -exec %q (%v), want kprof's with qemu", args, err)
	}
	script, err := os.ReadFile(filepath.Join(sh.Dir, "go"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "\nexec '/opt/k prof/kprof' goshim \"$@\"\n"; !strings.HasPrefix(string(script), "#!/bin/sh\n") || !strings.HasSuffix(string(script), want) {
		t.Errorf("the shim is %q, want a script ending in %q", script, want)
	}
}

// A test that builds a plugin with the go command and loads it passes
// under kprof test: the plugin is built with kprof's toolchain (the go
// shim), and its functions are counted in the test binary's profile.
func TestTestBuildsPlugin(t *testing.T) {
	heavy(t)
	if testing.Short() {
		t.Skip("builds the instrumented standard library for -buildmode=plugin")
	}
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("plugins tested on linux/amd64")
	}
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("plugins need cgo")
	}
	kprofBin := buildKprof(t)
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"go.mod": "module example.com/plug\n\ngo 1.22\n",
		"plug/plug.go": `package main

func Sum(n int) int {
	s := 0
	for i := range n {
		s += i * i
	}
	return s
}

func main() {}
`,
		"plug_test.go": `package plug

import (
	"os/exec"
	"path/filepath"
	"plugin"
	"testing"
)

func TestPlugin(t *testing.T) {
	so := filepath.Join(t.TempDir(), "p.so")
	if out, err := exec.Command("go", "build", "-buildmode=plugin", "-o", so, "./plug").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	p, err := plugin.Open(so)
	if err != nil {
		t.Fatal(err)
	}
	f, err := p.Lookup("Sum")
	if err != nil {
		t.Fatal(err)
	}
	if got := f.(func(int) int)(1000); got != 332833500 {
		t.Errorf("Sum(1000) = %d", got)
	}
}
`,
	})
	out := filepath.Join(t.TempDir(), "p.kprof")
	if got, err := runCmd(dir, []string{"KPROF_MODE=exact", "KPROF_OUT=" + out, "CGO_ENABLED=1"}, kprofBin, "test", "-count=1", "."); err != nil {
		t.Fatalf("kprof test: %v\n%s", err, got)
	}
	p, err := profile.ParseFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, fs := range p.Flat() {
		if fs.Func.Name == "example.com/plug/plug.Sum" {
			// 5 instructions an iteration, 3 around the loop.
			if fs.Self != 5003 {
				t.Errorf("the plugin's Sum counted %d instructions, want 5003", fs.Self)
			}
			return
		}
	}
	t.Errorf("the profile has no example.com/plug/plug.Sum")
}
