package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kprof/kprof/profile"
)

// TestSignalWritesProfile: SIGINT and SIGTERM write the profile, then have
// their usual effect (the program dies of the signal).
func TestSignalWritesProfile(t *testing.T) {
	kprofBin := buildKprof(t)
	bin := kprofBuild(t, kprofBin, "../../testdata/signal")
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		prof := filepath.Join(t.TempDir(), "p.kprof")
		cmd := exec.Command(bin)
		cmd.Env = append(os.Environ(), "KPROF_OUT="+prof)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		bufio.NewReader(out).ReadString('\n') // "ready"
		time.Sleep(300 * time.Millisecond)    // let it take samples
		cmd.Process.Signal(sig)
		err = cmd.Wait()
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("%v: %v, want death by signal", sig, err)
		}
		if ws := ee.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != sig {
			t.Errorf("%v: exit %v, want killed by the signal", sig, ws)
		}
		p, err := profile.ParseFile(prof)
		if err != nil {
			t.Fatalf("%v: %v", sig, err)
		}
		found := false
		for _, fs := range p.Flat() {
			found = found || fs.Func.Name == "main.spin" && fs.Self > 0
		}
		if !found {
			t.Errorf("%v: profile has no main.spin", sig)
		}
	}
}

// TestSignalHandledByProgram: a program that handles SIGINT and SIGTERM
// itself gets every one (the agent's watcher used to reset the signal,
// removing the program's handler, and raise it again: SIGTERM killed the
// program before its shutdown ran), ends as it chooses, and writes its
// profile at exit.
func TestSignalHandledByProgram(t *testing.T) {
	kprofBin := buildKprof(t)
	bin := kprofBuild(t, kprofBin, "../../testdata/signalhandled")
	for _, tc := range []struct {
		arg     string
		signals int
	}{
		{"", 2},
		{"stop", 1}, // the program stops listening as the signal arrives
	} {
		for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
			prof := filepath.Join(t.TempDir(), "p.kprof")
			cmd := exec.Command(bin, tc.arg)
			cmd.Env = append(os.Environ(), "KPROF_OUT="+prof, "KPROF_MODE=exact")
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			r := bufio.NewReader(out)
			var lines []string
			for i := 0; i < tc.signals+2; i++ {
				if i > 0 && i <= tc.signals {
					cmd.Process.Signal(sig)
				}
				line, err := r.ReadString('\n')
				if err != nil {
					break
				}
				lines = append(lines, strings.TrimSpace(line))
			}
			if err := cmd.Wait(); err != nil {
				t.Errorf("%q %v: %v, want a clean exit; output %q", tc.arg, sig, err, lines)
			}
			want := []string{"ready"}
			for i := 0; i < tc.signals; i++ {
				want = append(want, "handled "+sig.String())
			}
			want = append(want, "clean exit true")
			if strings.Join(lines, "|") != strings.Join(want, "|") {
				t.Errorf("%q %v: output %q, want %q", tc.arg, sig, lines, want)
			}
			p, err := profile.ParseFile(prof)
			if err != nil {
				t.Fatalf("%q %v: %v", tc.arg, sig, err)
			}
			var spins int64
			p.Walk(func(stack []profile.Func, n *profile.Node) {
				if stack[len(stack)-1].Name == "main.spin" {
					spins += n.Calls
				}
			})
			if spins != 1 {
				t.Errorf("%q %v: main.spin has %d calls in the profile, want 1 (written at exit)", tc.arg, sig, spins)
			}
		}
	}
}
