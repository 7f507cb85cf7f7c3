package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBadInput: a package that does not compile shows the compiler's error
// at the original file:line; an unknown flag gets the go command's own
// error; a toolchain kprof does not support gets one clear message.
func TestBadInput(t *testing.T) {
	kprofBin := buildKprof(t)
	broken, _ := filepath.Abs("../../testdata/broken")
	fig4, _ := filepath.Abs("../../testdata/progs/fig4")

	t.Run("compile error", func(t *testing.T) {
		out, err := runCmd(broken, nil, kprofBin, "build", "-o", filepath.Join(t.TempDir(), "b"), ".")
		if err == nil {
			t.Fatal("kprof build of a broken package succeeded")
		}
		if !strings.Contains(out, "main.go:9:") || !strings.Contains(out, "cannot use n") {
			t.Errorf("want the compiler's error at main.go:9, got:\n%s", out)
		}
	})
	t.Run("unknown flag", func(t *testing.T) {
		out, err := runCmd(fig4, nil, kprofBin, "build", "-nosuchflag", ".")
		if err == nil || !strings.Contains(out, "flag provided but not defined: -nosuchflag") {
			t.Errorf("want go's flag error, got %v:\n%s", err, out)
		}
	})
	t.Run("unsupported go", func(t *testing.T) {
		// A go command that says it is another release.
		dir := t.TempDir()
		real, err := lookPath("go")
		if err != nil {
			t.Skip(err)
		}
		script := "#!/bin/sh\nif [ \"$1 $2\" = \"env GOVERSION\" ]; then echo go1.25.3; exit 0; fi\nexec " + real + " \"$@\"\n"
		if err := os.WriteFile(filepath.Join(dir, "go"), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		out, err := runCmd(fig4, []string{"PATH=" + dir + string(os.PathListSeparator) + os.Getenv("PATH")}, kprofBin, "build", ".")
		want := "kprof supports go1.26.x and go1.27.x; the go command here is go1.25.3"
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(out, want) || strings.Count(strings.TrimSpace(out), "\n") != 0 {
			t.Errorf("want one line %q and exit status 1, got %v:\n%s", want, err, out)
		}
	})
	t.Run("test of a runtime dependency", func(t *testing.T) {
		// internal/cpu's test binary has a runtime of its own: a clear
		// error, not the linker's fingerprint mismatch.
		out, err := runCmd(fig4, nil, kprofBin, "test", "-run", "^$", "internal/cpu")
		want := "own version of a package the runtime depends on"
		if err == nil || !strings.Contains(out, want) || !strings.Contains(out, "test them with go test") {
			t.Errorf("want an error saying %q, got %v:\n%s", want, err, out)
		}
	})
}
