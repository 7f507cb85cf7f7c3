package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
)

// A test binary that builds a plugin with the go command and loads it
// (plugin.Open) needs the plugin built by the same instrumented toolchain
// as itself: a plugin built by the plain go command has another runtime,
// and plugin.Open refuses it ("plugin was built with a different version
// of package runtime"). kprof test runs test binaries through
// "kprof goexec" (go test's -exec, before the user's own -exec), which
// puts a directory first on their PATH whose "go" runs "kprof goshim": a
// go build with -buildmode=plugin becomes kprof build with the same
// kprof flags as the kprof test that ran it; any other go command runs the
// go command of the toolchain that built the tests, unchanged. (go test puts GOROOT/bin
// first on a test binary's PATH itself, hence -exec.)

// goShimEnv carries the shim's settings (goShim, JSON) to the commands a
// test runs.
const goShimEnv = "KPROF_GO_SHIM"

// goShim is what the shim needs: its directory, the go command it stands
// in for, and the kprof flags of the kprof test that installed it.
type goShim struct {
	Dir   string   `json:"dir"`
	Go    string   `json:"go"`
	Flags []string `json:"flags"`
}

// installGoShim writes the go shim into a directory under dir and returns
// go test's arguments goArgs with kprof's -exec, and the environment
// entries for go test. target is the GOOS_GOARCH the tests are built for:
// without an -exec of the user's, go test runs a test binary for another
// system through go_GOOS_GOARCH_exec, if PATH has it, and so does kprof's
// -exec then. It changes nothing where there is no POSIX shell to run the
// script (Windows, which has no plugins).
//
// An -exec also turns off go test's cache of test results: kprof test
// runs the tests every time, and every time writes their profiles (a
// cached result wrote none).
//
// The go command it stands in for is goroot's, the toolchain's that
// builds the tests, as go test gives test binaries: with GOTOOLCHAIN
// naming another release, the go command on PATH is another release's.
func installGoShim(dir, self, goroot string, kf kprofFlags, target string, goArgs []string) ([]string, []string, error) {
	if runtime.GOOS == "windows" {
		return goArgs, nil, nil
	}
	realGo := filepath.Join(goroot, "bin", "go")
	var err error
	if _, err = os.Stat(realGo); goroot == "" || err != nil {
		if realGo, err = exec.LookPath("go"); err == nil {
			realGo, err = filepath.Abs(realGo)
		}
	}
	if err != nil {
		return nil, nil, err
	}
	quotedSelf, ok := quoteField(self)
	if !ok {
		return goArgs, nil, nil // go test could not run it
	}
	bin := filepath.Join(dir, "goshim")
	settings, err := json.Marshal(goShim{Dir: bin, Go: realGo, Flags: kf.shimFlags})
	if err != nil {
		return nil, nil, err
	}
	if err := os.MkdirAll(bin, 0o777); err != nil {
		return nil, nil, err
	}
	// The script carries the settings too: a test may run go with an
	// environment of its own (testscript does), PATH kept, the settings
	// not.
	shq := func(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
	script := "#!/bin/sh\nif [ -z \"$" + goShimEnv + "\" ]; then " + goShimEnv + "=" + shq(string(settings)) + "; export " + goShimEnv + "; fi\nexec " + shq(self) + " goshim \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "go"), []byte(script), 0o777); err != nil {
		return nil, nil, err
	}
	// kprof's -exec runs the user's, if any, with its own quoting.
	wrap := quotedSelf + " goexec"
	user := false
	var out []string
	for i := 0; i < len(goArgs); i++ {
		a := goArgs[i]
		if a == "-args" || a == "--args" {
			out = append(out, goArgs[i:]...)
			break
		}
		name, val, hasVal := strings.Cut(a, "=")
		if name != "-exec" && name != "--exec" {
			out = append(out, a)
			continue
		}
		if !hasVal && i+1 < len(goArgs) {
			i++
			val = goArgs[i]
		}
		wrap += " " + val
		user = true
	}
	if host := runtime.GOOS + "_" + runtime.GOARCH; !user && target != "" && target != host {
		if prog, err := exec.LookPath("go_" + target + "_exec"); err == nil {
			if q, ok := quoteField(prog); ok {
				wrap += " " + q
			}
		}
	}
	return append([]string{"-exec", wrap}, out...), []string{goShimEnv + "=" + string(settings)}, nil
}

// quoteField quotes s as one field of go test's -exec, which the go
// command splits at spaces outside quotes; ok is false if it cannot.
func quoteField(s string) (q string, ok bool) {
	switch {
	case !strings.ContainsAny(s, " \t\n'\""):
		return s, true
	case !strings.Contains(s, "'"):
		return "'" + s + "'", true
	case !strings.Contains(s, `"`):
		return `"` + s + `"`, true
	}
	return "", false
}

// readGoShim reads the shim's settings from the environment.
func readGoShim(cmd string) (goShim, error) {
	var sh goShim
	if err := json.Unmarshal([]byte(os.Getenv(goShimEnv)), &sh); err != nil || sh.Go == "" {
		return sh, fmt.Errorf("kprof %s runs under kprof test only (%s is not set or not valid)", cmd, goShimEnv)
	}
	return sh, nil
}

// runGoExec runs a test binary, args, as go test's -exec: with the go
// shim first on its PATH.
func runGoExec(args []string) error {
	sh, err := readGoShim("goexec")
	if err != nil {
		return err
	}
	if len(args) == 0 {
		return usageError{fmt.Errorf("goexec: no program to run")}
	}
	path := sh.Dir
	if old := os.Getenv("PATH"); old != "" {
		path += string(os.PathListSeparator) + old
	}
	os.Setenv("PATH", path)
	prog, err := exec.LookPath(args[0])
	if err != nil {
		return err
	}
	err = syscall.Exec(prog, args, os.Environ())
	return fmt.Errorf("running %s: %v", prog, err)
}

// runGoShim runs the go command args as the shim: through kprof build for
// a plugin, else the real go command in place of this process.
func runGoShim(args []string) error {
	sh, err := readGoShim("goshim")
	if err != nil {
		return err
	}
	if len(args) > 0 && args[0] == "build" && buildsPlugin(args[1:]) {
		// kprof's own go commands are the real one.
		var path []string
		for _, d := range filepath.SplitList(os.Getenv("PATH")) {
			if d != sh.Dir {
				path = append(path, d)
			}
		}
		os.Setenv("PATH", strings.Join(path, string(os.PathListSeparator)))
		return runGo("build", append(append([]string{}, sh.Flags...), args[1:]...))
	}
	err = syscall.Exec(sh.Go, append([]string{"go"}, args...), os.Environ())
	return fmt.Errorf("running %s: %v", sh.Go, err)
}

// buildsPlugin reports whether go build flags args ask for
// -buildmode=plugin.
func buildsPlugin(args []string) bool {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || !strings.HasPrefix(a, "-") {
			break // the packages
		}
		name, val, hasVal := strings.Cut(a, "=")
		name = "-" + strings.TrimLeft(name, "-")
		if goValueFlags[name] && !hasVal && i+1 < len(args) {
			i++
			val = args[i]
		}
		if name == "-buildmode" && val == "plugin" {
			return true
		}
	}
	return false
}
