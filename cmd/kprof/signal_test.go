package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
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
