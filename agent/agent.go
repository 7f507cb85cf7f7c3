// Package agent is kprof's agent API — the Go form of the paper's
// SamplingProfiler (Fig. 3) — and the agents that ship with kprof: the
// sampling agent (SA, Figs 7–9), the exact agent (JP) and "off".
//
// An agent is linked into every program kprof builds (package agent/auto
// chooses one from KPROF_MODE at start). A custom agent is an ordinary Go
// package that calls Install from its init function and is linked with
// `kprof build -agent IMPORTPATH`. It runs on the sampled goroutine, so it
// must not block for long; instrumented code it calls is not counted.
//
// The package depends on the standard library only.
package agent

import (
	"github.com/kprof/kprof/counter"
)

// Version is the kprof version recorded in profiles.
const Version = "0.1.0"

// Func identifies a function on the reified stack.
type Func = counter.Func

// Profiler is implemented by agents (paper Fig. 3).
//
// Register is called when a goroutine first reaches a check and returns the
// number of instructions until its first sample. Sample receives the
// goroutine's reified stack (stack[0] outermost, stack[len-1] running),
// the length of the prefix unchanged since its previous sample, and the
// instructions it executed since then, and returns the granularity until
// the next one. Exit receives the instructions a
// goroutine ran after its last sample, when it ends.
//
// Calls for one goroutine never overlap; calls for different goroutines
// run concurrently. The stack slice is valid only during the call.
type Profiler = counter.Agent

// Install makes p the agent of the program. Call it from an init function.
func Install(p Profiler) { counter.Install(p) }

// Off runs the program without an agent: counting continues, sampling
// never happens (the paper's "No Prof." setting).
func Off() { counter.Off() }

// AtExit runs f when the program exits (main returns or os.Exit), with
// counting suspended on the calling goroutine.
func AtExit(f func()) {
	counter.AtExit(func() { Suspend(f) })
}

// Suspend runs f with counting suspended on the calling goroutine: what f
// runs is neither counted nor sampled.
func Suspend(f func()) {
	p := counter.Suspend()
	defer counter.Resume(p)
	f()
}

// GoSuspended runs f, suspended (Suspend), on a goroutine the program
// does not see (counter.GoHidden): for an agent's own work beside the
// program, such as writing a profile every interval.
func GoSuspended(f func()) { counter.GoHidden(func() { Suspend(f) }) }

// Recorder is implemented by agents that record one stretch of the run at
// a time (a benchmark's timed part); see counter.Recorder.
type Recorder = counter.Recorder

// SetRecorder connects r. Call it from an init function.
func SetRecorder(r Recorder) { counter.SetRecorder(r) }
