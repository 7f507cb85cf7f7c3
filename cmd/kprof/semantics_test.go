package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kprof/kprof/profile"
)

// TestSemantics builds every program under testdata/semantics and
// testdata/progs twice, with go build and with kprof build, runs both, and
// requires the same output and exit status, and a valid profile from the
// instrumented run.
func TestSemantics(t *testing.T) {
	heavy(t)
	kprofBin := buildKprof(t)
	dirs, _ := filepath.Glob("../../testdata/semantics/*")
	progs, _ := filepath.Glob("../../testdata/progs/*")
	dirs = append(dirs, progs...)
	for _, dir := range dirs {
		dir := dir
		t.Run(filepath.Base(dir), func(t *testing.T) {
			abs, _ := filepath.Abs(dir)
			plain := filepath.Join(t.TempDir(), "plain")
			if out, err := runCmd(abs, nil, "go", "build", "-o", plain, "."); err != nil {
				t.Fatalf("go build: %v\n%s", err, out)
			}
			inst := kprofBuild(t, kprofBin, dir)
			runs := [][]string{nil}
			if filepath.Base(dir) == "panics" {
				// End with an uncaught panic, and with a fatal error.
				runs = [][]string{{"crash"}, {"fatal"}}
			}
			for _, args := range runs {
				checkSemantics(t, plain, inst, args)
			}
		})
	}
}

// checkSemantics runs the plain and the kprof build of a program with
// args, and requires the same output and exit status, and a valid profile
// from the kprof build.
func checkSemantics(t *testing.T, plain, inst string, args []string) {
	t.Helper()
	wantOut, wantErr, wantCode := runBoth(t, plain, args)
	prof := filepath.Join(t.TempDir(), "p.kprof")
	gotOut, gotErr, gotCode := runBoth(t, inst, args, "KPROF_OUT="+prof)
	if gotCode != wantCode {
		t.Errorf("%v: exit status %d, want %d", args, gotCode, wantCode)
	}
	if gotOut != wantOut {
		t.Errorf("%v: stdout differs:\n--- kprof ---\n%s\n--- go ---\n%s", args, gotOut, wantOut)
	}
	if a, b := normalizeTrace(gotErr), normalizeTrace(wantErr); a != b {
		t.Errorf("%v: stderr differs:\n--- kprof ---\n%s\n--- go ---\n%s", args, a, b)
	}
	// A panic or a fatal error that ends the program writes the
	// profile too (the runtime patch's kprofPanicExit).
	p, err := profile.ParseFile(prof)
	if err != nil {
		t.Fatalf("%v: profile: %v", args, err)
	}
	if p.TotalInstructions <= 0 {
		t.Errorf("%v: profile counts %d instructions", args, p.TotalInstructions)
	}
}

func runBoth(t *testing.T, bin string, args []string, env ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), env...)
	var o, e strings.Builder
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return o.String(), e.String(), code
}

var (
	hexOffset = regexp.MustCompile(` \+0x[0-9a-f]+`)
	args      = regexp.MustCompile(`\(\{?0x[0-9a-fx, .?{}]*\)`)
	goroutine = regexp.MustCompile(`goroutine \d+ gp=0x[0-9a-f]+ m=\d+ mp=0x[0-9a-f]+`)
	addr      = regexp.MustCompile(`(addr|pc)=0x[0-9a-f]+`)
)

// normalizeTrace keeps of a panic's stack trace what must not change under
// instrumentation: the messages and the main package's frames with their
// original file:line (kprof's own frames and addresses differ).
func normalizeTrace(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		l = hexOffset.ReplaceAllString(l, "")
		l = args.ReplaceAllString(l, "(...)")
		l = goroutine.ReplaceAllString(l, "goroutine")
		l = addr.ReplaceAllString(l, "$1=?")
		if strings.HasPrefix(l, "\t") && !strings.Contains(l, "main.go:") {
			continue // a frame outside the program's own file
		}
		if strings.HasPrefix(l, "runtime.") || strings.HasPrefix(l, "github.com/kprof/") || strings.HasPrefix(l, "created by runtime") {
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}
