package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// binaries builds pkg's two test binaries in dir: plain with go test -c
// and instrumented with kprof test -c (one binary serves every mode:
// KPROF_MODE is read at run time). It returns their paths.
func binaries(ctx context.Context, kprof, dir string, p pkgSpec) (plainBin, kprofBin string, err error) {
	base := filepath.Join(dir, strings.ReplaceAll(p.Path, "/", "_"))
	plainBin, kprofBin = base+".plain.test", base+".kprof.test"
	var tags []string
	if p.Tags != "" {
		tags = []string{"-tags", p.Tags}
	}
	for _, c := range []struct {
		name string
		args []string
	}{
		{"go", append(append([]string{"test", "-c", "-o", plainBin}, tags...), p.Path)},
		{kprof, append(append([]string{"test", "-c", "-o", kprofBin}, tags...), p.Path)},
	} {
		cmd := exec.CommandContext(ctx, c.name, c.args...)
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", "", fmt.Errorf("%s %s: %v\n%s", filepath.Base(c.name), strings.Join(c.args, " "), err, firstLines(out, 10))
		}
	}
	return plainBin, kprofBin, nil
}

// runBinary runs a test binary's benchmarks in the package's source
// directory (as go test does: benchmarks read testdata), in mode unless
// variant is plain, once per -bench/-skip pattern of p, and returns the
// outputs and the run's record (time summed, memory the largest).
func runBinary(ctx context.Context, bin, srcDir, profile string, p pkgSpec, variant, benchtime string, timeout time.Duration) ([]byte, run) {
	r := run{Pkg: p.Path, Variant: variant}
	var all bytes.Buffer
	for _, pat := range p.patterns() {
		args := []string{"-test.run", "^$", "-test.bench", pat.Bench, "-test.benchtime", benchtime, "-test.timeout", timeout.String()}
		if pat.Skip != "" {
			args = append(args, "-test.skip", pat.Skip)
		}
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Dir = srcDir
		cmd.Env = os.Environ()
		if variant != plain {
			cmd.Env = append(cmd.Env, "KPROF_MODE="+variant, "KPROF_OUT="+profile)
		}
		var out bytes.Buffer
		cmd.Stdout = &out
		cmd.Stderr = &out
		start := time.Now()
		err := cmd.Run()
		r.Seconds += time.Since(start).Seconds()
		if ps := cmd.ProcessState; ps != nil {
			if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
				r.MaxRSSKB = max(r.MaxRSSKB, ru.Maxrss) // kilobytes on Linux
			}
		}
		all.Write(out.Bytes())
		if err != nil && r.Err == "" {
			var ee *exec.ExitError
			if errors.As(err, &ee) || ctx.Err() != nil {
				r.Err = fmt.Sprintf("-bench %s: %v: %s", pat.Bench, err, firstLines(failureLines(out.Bytes()), 5))
			} else {
				r.Err = err.Error()
			}
		}
	}
	return all.Bytes(), r
}

// failureLines picks the lines of a failed run's output that say why:
// from the first line that is not a benchmark result or a header on.
func failureLines(out []byte) []byte {
	lines := bytes.Split(out, []byte("\n"))
	for i, l := range lines {
		s := string(l)
		switch {
		case strings.HasPrefix(s, "Benchmark") && strings.Contains(s, "/op"),
			strings.HasPrefix(s, "goos:"), strings.HasPrefix(s, "goarch:"), strings.HasPrefix(s, "pkg:"),
			strings.HasPrefix(s, "cpu:"), strings.HasPrefix(s, "Unit "), s == "":
			continue
		}
		return bytes.Join(lines[i:], []byte("\n"))
	}
	return out
}

func firstLines(b []byte, n int) string {
	lines := strings.SplitN(strings.TrimSpace(string(b)), "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}
