package workloads

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// quickSize is the -n value every workload accepts as its CI size.
const quickSize = "1"

// checksumLine is the shape of the single line each workload prints.
var checksumLine = regexp.MustCompile(`^([a-z]+) n=[0-9]+ (?:[a-z]+=[0-9+]+ )*checksum=[0-9a-f]{16}\n$`)

// workloads lists the subdirectories holding a main.go.
func workloads(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if _, err := os.Stat(filepath.Join(e.Name(), "main.go")); err == nil {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	if len(names) < 10 {
		t.Fatalf("found %d workloads (%v), want at least 10", len(names), names)
	}
	return names
}

// buildAll builds every workload into a fresh directory with one go command
// and returns that directory. env is appended to the environment.
func buildAll(t *testing.T, names []string, env ...string) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go command not found: %v", err)
	}
	dir := t.TempDir()
	args := []string{"build", "-o", dir + string(filepath.Separator)}
	for _, name := range names {
		args = append(args, "./"+name)
	}
	cmd := exec.Command(goTool, args...)
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return dir
}

func exe(dir, name string) string {
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	return filepath.Join(dir, name)
}

// run runs a workload at the quick size and returns its checksum line.
func run(t *testing.T, bin, name string) string {
	t.Helper()
	cmd := exec.Command(bin, "-n", quickSize)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s -n %s: %v\nstderr:\n%s", name, quickSize, err, stderr.Bytes())
	}
	line := stdout.String()
	m := checksumLine.FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("%s: output is not a single checksum line: %q", name, line)
	}
	if m[1] != name {
		t.Fatalf("%s: checksum line names %q", name, m[1])
	}
	return line
}

// TestWorkloads builds every workload and runs it twice at the quick size:
// both runs must exit 0 and print the same checksum line.
func TestWorkloads(t *testing.T) {
	names := workloads(t)
	dir := buildAll(t, names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			bin := exe(dir, name)
			first := run(t, bin, name)
			if second := run(t, bin, name); second != first {
				t.Errorf("%s: output differs between runs:\n%s%s", name, first, second)
			}
		})
	}
}

// TestWorkloads386 checks that the checksums do not depend on the word size:
// on linux/amd64 it also builds every workload for GOARCH=386 and compares the
// quick-size output with the native build.
func TestWorkloads386(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-architecture build skipped in -short mode")
	}
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skipf("needs linux/amd64, running on %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	names := workloads(t)
	native := buildAll(t, names)
	x86 := buildAll(t, names, "GOARCH=386")
	if err := exec.Command(exe(x86, names[0]), "-n", quickSize).Run(); err != nil {
		var exitErr *exec.ExitError
		if !errors.As(err, &exitErr) {
			t.Skipf("cannot execute 386 binaries here: %v", err)
		}
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			want := run(t, exe(native, name), name)
			if got := run(t, exe(x86, name), name); got != want {
				t.Errorf("%s: GOARCH=386 output differs:\namd64: %s386:   %s", name, want, got)
			}
		})
	}
}

// TestREADME checks that README.md documents every workload.
func TestREADME(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range workloads(t) {
		if !bytes.Contains(readme, []byte("| `"+name+"` |")) {
			t.Errorf("README.md has no table row for %s", name)
		}
	}
}
