// Package cpuprofile gives every workload the same two flags for Go's own
// timer-based CPU profiler (runtime/pprof), which the evaluation harness
// (bench/harness) compares with kprof as the paper's 'hprof' baseline:
//
//	-cpuprofile FILE   write a CPU profile to FILE
//	-cpuhz N           samples per second of CPU time (default 100)
//
// The flags are registered when the package is initialised; a workload calls
// [Start] after flag.Parse and defers the function it returns.
//
// runtime/pprof always asks for 100 Hz. For any other rate Start sets the
// rate first with runtime.SetCPUProfileRate, so pprof's own request fails
// and the runtime prints "runtime: cannot set cpu profile rate until previous
// profile has finished." on stderr. The warning is expected: the profile is
// taken at the rate Start set, and its Period (in nanoseconds, 1e9/N) says
// so. The harness checks that Period.
package cpuprofile

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
)

var (
	file = flag.String("cpuprofile", "", "write a runtime/pprof CPU profile to this `file`")
	hz   = flag.Int("cpuhz", 100, "CPU profiling `rate` in samples per second (with -cpuprofile)")
)

// Start starts CPU profiling when -cpuprofile was given and returns the
// function that stops it and closes the file; without -cpuprofile it does
// nothing. It must be called after flag.Parse. A bad rate stops the program
// with exit status 2, a file that cannot be written with status 1, as the
// workloads do for their own flags.
func Start() (stop func()) {
	if *file == "" {
		return func() {}
	}
	if *hz < 1 || *hz > 1_000_000 {
		fmt.Fprintln(os.Stderr, "cpuprofile: -cpuhz must be in [1, 1000000]")
		os.Exit(2)
	}
	f, err := os.Create(*file)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cpuprofile:", err)
		os.Exit(1)
	}
	if *hz != 100 {
		runtime.SetCPUProfileRate(*hz)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintln(os.Stderr, "cpuprofile:", err)
		os.Exit(1)
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "cpuprofile:", err)
			os.Exit(1)
		}
	}
}
