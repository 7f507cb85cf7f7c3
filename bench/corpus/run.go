package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kprof/kprof/toolchain"
)

// rssEnv names the file a wrapped test binary's peak RSS is appended to:
// when it is set, this command is go test's -exec wrapper (see wrapExec).
const rssEnv = "KPROF_CORPUS_RSS_FILE"

// maxRSSEnv is the wrapper's limit on a test binary's resident set, in
// KiB: on a shared machine a runaway binary is killed before it takes
// the memory of everything else.
const maxRSSEnv = "KPROF_CORPUS_MAX_RSS"

// rssLimitMsg starts the line the wrapper prints when it kills a binary.
const rssLimitMsg = "corpus: test binary killed: resident set"

// wrapExec runs args (a test binary and its flags) as go test's -exec
// program: it waits for the binary and appends its peak resident set, in
// KiB, to the file named by rssEnv. wait4's rusage covers the binary and
// the processes it waited for, so the figure is the largest of them.
func wrapExec(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "corpus: -exec wrapper: no program")
		return 2
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGQUIT)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "corpus: -exec wrapper: %v\n", err)
		return 2
	}
	go func() {
		for s := range sigs {
			cmd.Process.Signal(s)
		}
	}()
	if limit, err := strconv.ParseInt(os.Getenv(maxRSSEnv), 10, 64); err == nil && limit > 0 {
		go watchRSS(cmd.Process, limit)
	}
	err := cmd.Wait()
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		if f, err := os.OpenFile(os.Getenv(rssEnv), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644); err == nil {
			fmt.Fprintf(f, "%d\n", ru.Maxrss)
			f.Close()
		}
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return exit.ExitCode()
	}
	if err != nil {
		return 1
	}
	return 0
}

// watchRSS kills p once its resident set exceeds limit KiB.
func watchRSS(p *os.Process, limit int64) {
	statm := fmt.Sprintf("/proc/%d/statm", p.Pid)
	page := int64(os.Getpagesize() / 1024)
	for range time.Tick(100 * time.Millisecond) {
		data, err := os.ReadFile(statm)
		if err != nil {
			return // gone
		}
		f := strings.Fields(string(data))
		if len(f) < 2 {
			return
		}
		pages, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			return
		}
		if rss := pages * page; rss > limit {
			fmt.Fprintf(os.Stderr, "%s %s over the -maxrss limit %s\n", rssLimitMsg, mb(rss), mb(limit))
			p.Kill()
			return
		}
	}
}

// runner runs the go and kprof commands of a corpus run.
type runner struct {
	kprof   string        // kprof binary
	self    string        // this binary, go test's -exec wrapper
	work    string        // scratch directory
	env     []string      // environment of every command (GOTOOLCHAIN, …)
	timeout time.Duration // limit of one command
	maxRSS  int64         // KiB: limit of one test binary's resident set
}

// outcome is what one command did.
type outcome struct {
	err     error
	timeout bool
	overRSS bool // a test binary was killed over the RSS limit
	wall    time.Duration
	output  []byte
	treeRSS int64 // KiB: peak RSS of the command or any process it waited for
	testRSS int64 // KiB: peak RSS of the test binaries (0 if none ran)
}

// run runs name args in dir with extra environment settings.
func (r *runner) run(dir string, extra []string, name string, args ...string) outcome {
	ctx, cancel := context.WithTimeout(context.Background(), r.timeout)
	defer cancel()
	rssFile, err := os.CreateTemp(r.work, "rss-")
	if err != nil {
		return outcome{err: err}
	}
	rssFile.Close()
	defer os.Remove(rssFile.Name())

	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(append([]string{}, r.env...), extra...)
	cmd.Env = append(cmd.Env, rssEnv+"="+rssFile.Name(), fmt.Sprintf("%s=%d", maxRSSEnv, r.maxRSS))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// A process group of its own, so that a timeout ends the compilers
	// and test binaries too, not only the go command.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second

	start := time.Now()
	err = cmd.Run()
	o := outcome{err: err, wall: time.Since(start), output: out.Bytes()}
	o.timeout = ctx.Err() != nil || bytes.Contains(o.output, []byte("panic: test timed out"))
	o.overRSS = bytes.Contains(o.output, []byte(rssLimitMsg))
	if ctx.Err() != nil {
		fmt.Fprintf(&out, "corpus: killed after %s\n", r.timeout)
		o.output = out.Bytes()
	}
	if cmd.ProcessState != nil {
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			o.treeRSS = ru.Maxrss
		}
	}
	if data, err := os.ReadFile(rssFile.Name()); err == nil {
		o.testRSS = maxKiB(string(data))
	}
	return o
}

// maxKiB is the largest of the numbers, one a line, that wrapExec wrote.
func maxKiB(s string) int64 {
	var m int64
	for _, line := range strings.Fields(s) {
		if n, err := strconv.ParseInt(line, 10, 64); err == nil && n > m {
			m = n
		}
	}
	return m
}

// goTest runs go test (kprof test if kprof is set) -short -count=1 on m's
// packages in dir; warm runs no test, only builds and links.
func (r *runner) goTest(m Module, dir string, useKprof bool, mode string, warm bool) outcome {
	// The test binaries' own timeout comes first, so that a test that
	// hangs is named in their goroutine dump before the command is killed.
	testTimeout := r.timeout - r.timeout/10
	args := []string{"test", "-short", "-count=1", "-timeout", testTimeout.String(), "-exec", r.self}
	if warm {
		args = append(args, "-run", "^$")
	}
	args = append(args, m.Flags...)
	args = append(args, m.Pkgs...)
	var extra []string
	name := "go"
	if useKprof {
		name = r.kprof
		extra = append(extra, "KPROF_MODE="+mode)
	}
	return r.run(dir, extra, name, args...)
}

// prepare copies m's source from the module cache to a writable
// directory whose path ends in the module path (some tests match their
// own file paths), adds what go.mod and go.sum lack for the tested
// packages, and returns the directory and go.mod's go line.
func (r *runner) prepare(m Module) (dir, goLine string, err error) {
	o := r.run(r.work, []string{"GOFLAGS=-mod=mod"}, "go", "mod", "download", "-json", m.Name())
	if o.err != nil {
		return "", "", fmt.Errorf("go mod download %s: %v\n%s", m.Name(), o.err, o.output)
	}
	var info struct{ Dir, Error string }
	if err := json.Unmarshal(o.output, &info); err != nil || info.Dir == "" {
		return "", "", fmt.Errorf("go mod download %s: %s%v", m.Name(), info.Error, err)
	}
	dir = filepath.Join(r.work, "src", filepath.FromSlash(m.Path))
	if err := os.RemoveAll(dir); err != nil {
		return "", "", err
	}
	if err := copyTree(dir, info.Dir); err != nil {
		return "", "", fmt.Errorf("copy %s: %w", m.Name(), err)
	}
	modFile := filepath.Join(dir, "go.mod")
	mod, err := os.ReadFile(modFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		goLine = noGoMod
		mod = []byte("module " + m.Path + "\n")
		if err := os.WriteFile(modFile, mod, 0o644); err != nil {
			return "", "", err
		}
	case err != nil:
		return "", "", err
	default:
		goLine = goDirective(string(mod))
	}
	// Complete go.mod and go.sum for the tested packages. -mod=mod may
	// also write a go line where there was none, which would raise the
	// language version: take it out again.
	args := append([]string{"list", "-test", "-deps"}, m.Pkgs...)
	if o := r.run(dir, []string{"GOFLAGS=-mod=mod"}, "go", args...); o.err != nil {
		return "", "", fmt.Errorf("go list -test -deps: %v\n%s", o.err, firstLines(o.output, 10))
	}
	if goLine == noGoMod || goLine == noGoLine {
		after, err := os.ReadFile(modFile)
		if err != nil {
			return "", "", err
		}
		if err := os.WriteFile(modFile, []byte(dropGoLines(string(after))), 0o644); err != nil {
			return "", "", err
		}
	}
	return dir, goLine, nil
}

// copyTree copies the files of src to dst, writable.
func copyTree(dst, src string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, info.Mode().Perm()|0o200)
	})
}

const (
	noGoMod  = "none (no go.mod)"
	noGoLine = "none (no go line)"
)

// goDirective is the version of go.mod's go line, or noGoLine.
func goDirective(mod string) string {
	for _, line := range strings.Split(mod, "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "go" {
			return f[1]
		}
	}
	return noGoLine
}

// dropGoLines removes go.mod's go and toolchain lines.
func dropGoLines(mod string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(mod, "\n") {
		f := strings.Fields(line)
		if len(f) >= 1 && (f[0] == "go" || f[0] == "toolchain") {
			continue
		}
		b.WriteString(line)
	}
	return b.String()
}

// buildKprof builds cmd/kprof from the commit checked out in repo (its
// HEAD, not the work tree, which others may be editing) into dir.
func buildKprof(repo, dir string) (string, error) {
	src := filepath.Join(dir, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return "", err
	}
	archive := exec.Command("git", "-C", repo, "archive", "--format=tar", "HEAD")
	untar := exec.Command("tar", "-x", "-C", src)
	pipe, err := archive.StdoutPipe()
	if err != nil {
		return "", err
	}
	untar.Stdin = pipe
	if err := archive.Start(); err != nil {
		return "", err
	}
	if out, err := untar.CombinedOutput(); err != nil {
		return "", fmt.Errorf("git archive | tar: %v\n%s", err, out)
	}
	if err := archive.Wait(); err != nil {
		return "", fmt.Errorf("git archive: %v", err)
	}
	bin := filepath.Join(dir, "kprof")
	// (Built as kprof's tests build it: they share the instrumented
	// packages.)
	if err := toolchain.BuildKprof(src, bin); err != nil {
		return "", err
	}
	return bin, nil
}
