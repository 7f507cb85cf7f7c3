package rewrite

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
)

// BenchUnit is the benchmark metric kprof adds to every benchmark result.
const BenchUnit = "instructions/op"

// testingFile is added to package testing: the instruction count of the
// measured part of a benchmark.
const testingFile = `// Code added by kprof. DO NOT EDIT.

package testing

import (
	"sync"
	"sync/atomic"
	"time"

	kprofcounter "github.com/kprof/kprof/counter"
)

// kprofMark reads the instructions all goroutines have executed so far.
func kprofMark() int64 { return kprofcounter.Executed() }

// kprofRecord, kprofResetRecord and kprofWriteRecord drive the agent's
// recording of the timed part (kprof test --profile).
func kprofRecord(on bool)            { kprofcounter.Record(on) }
func kprofResetRecord()              { kprofcounter.ResetRecord() }
func kprofWriteRecord(name string)   { kprofcounter.WriteRecord(name) }

// The benchmark clock and RunParallel's synchronisation run instrumented
// code (packages time and sync) that is not the benchmark's: they are not
// counted: how often a WaitGroup spins, or how many times PB.Next takes
// a new grain of iterations, depends on timing.

func kprofTimeNow() highPrecisionTime {
	p := kprofcounter.Suspend()
	t := highPrecisionTimeNow()
	kprofcounter.Resume(p)
	return t
}

func kprofTimeSince(t highPrecisionTime) time.Duration {
	p := kprofcounter.Suspend()
	d := highPrecisionTimeSince(t)
	kprofcounter.Resume(p)
	return d
}

func kprofDone(wg *sync.WaitGroup) {
	p := kprofcounter.Suspend()
	wg.Done()
	kprofcounter.Resume(p)
}

func kprofAdd(n *atomic.Uint64, delta uint64) uint64 {
	p := kprofcounter.Suspend()
	v := n.Add(delta)
	kprofcounter.Resume(p)
	return v
}

func kprofWait(wg *sync.WaitGroup) {
	p := kprofcounter.Suspend()
	wg.Wait()
	kprofcounter.Resume(p)
}

// kprofBench is what B records for the instructions/op metric.
type kprofBench struct {
	start     int64 // kprofMark when the timer last started
	count     int64 // instructions while the timer ran in the current runN
	first     int64 // count of the runN(1) that every b.N benchmark starts with
	haveFirst bool
	procs     int // GOMAXPROCS of the first run
}

// kprofReport adds the exact instructions/op metric. A benchmark using
// b.Loop counts the loop alone: its instructions divided by b.N. A b.N
// benchmark also counts, between its timer's start (or ResetTimer) and
// its end, the code around its loop; the difference from its first run
// (b.N = 1) leaves the cost of N-1 iterations of the loop.
func (b *B) kprofReport() {
	if b.N <= 0 || b.extra == nil || b.failed {
		return
	}
	k := &b.kprof
	per := float64(k.count) / float64(b.N)
	if b.loop.n == 0 && b.N > 1 && k.haveFirst {
		per = float64(k.count-k.first) / float64(b.N-1)
	}
	b.extra["` + BenchUnit + `"] = per
	kprofWriteRecord(b.name)
}
`

// patchTesting rewrites the compile step of package testing so that every
// benchmark result carries the exact instructions/op metric, counted while
// the benchmark timer runs, and the benchmark header declares the metric
// exact for benchstat. It returns the new list of Go files. It fails closed.
func patchTesting(files []string, workDir, goVersion string) ([]string, error) {
	// Every edit keeps the line count, so that positions in package
	// testing stay those of its source.
	edits := []edit{
		{"\t\tb.timerOn = true\n", "\t\tb.timerOn = true; b.kprof.start = kprofMark(); kprofRecord(true)\n"},
		// Marks come after starting the clock and before stopping it
		// (package time is instrumented).
		{"\t\tb.duration += highPrecisionTimeSince(b.start)\n", "\t\tkprofRecord(false); b.kprof.count += kprofMark() - b.kprof.start; b.duration += highPrecisionTimeSince(b.start)\n"},
		{"\t\tb.start = highPrecisionTimeNow()\n\t}\n\tb.duration = 0\n",
			"\t\tb.start = highPrecisionTimeNow(); b.kprof.start = kprofMark()\n\t}\n\tb.duration = 0; b.kprof.count = 0; kprofResetRecord()\n"},
		{"\tb.StopTimer()\n\tb.previousN = n\n",
			"\tb.StopTimer(); if n == 1 && !b.kprof.haveFirst { b.kprof.first, b.kprof.haveFirst, b.kprof.procs = b.kprof.count, true, runtime.GOMAXPROCS(0) }\n\tb.previousN = n\n"},
		// go test -cpu runs the first benchmark of each -cpu list after
		// one run at the default GOMAXPROCS: the first run is made again.
		{"\tif b.loop.n == 0 {\n\t\t// Run the benchmark for at least the specified amount of time.\n",
			"\tif b.loop.n == 0 && b.kprof.haveFirst && b.kprof.procs != runtime.GOMAXPROCS(0) { b.kprof.haveFirst = false; b.runN(1) }; if b.loop.n == 0 {\n\t\t// Run the benchmark for at least the specified amount of time.\n"},
		{"\tb.result = BenchmarkResult{", "\tb.kprofReport(); b.result = BenchmarkResult{"},
		{"\t\t\tdefer wg.Done()\n", "\t\t\tdefer kprofDone(&wg)\n"},
		{"\twg.Wait()\n", "\tkprofWait(&wg)\n"},
		{"pb.globalN.Add(pb.grain)", "kprofAdd(pb.globalN, pb.grain)"},
		{"\t\t\tfmt.Fprintf(b.w, \"cpu: %s\\n\", cpu)\n\t\t}\n",
			"\t\t\tfmt.Fprintf(b.w, \"cpu: %s\\n\", cpu)\n\t\t}; fmt.Fprintf(b.w, \"Unit " + BenchUnit + " assume=exact\\n\")\n"},
	}
	return patchPackage(files, workDir, goVersion, "testing", "benchmark.go", "kprof_testing.go", testingFile,
		func(src []byte, what func(string) error) ([]byte, error) {
			end, err := structEnd("benchmark.go", src, "B")
			if err != nil {
				return nil, what(err.Error())
			}
			src = append(src[:end:end], append([]byte("kprof kprofBench; "), src[end:]...)...)
			if src, err = applyEdits(src, "benchmark.go", edits, what); err != nil {
				return nil, err
			}
			src = bytes.ReplaceAll(src, []byte("highPrecisionTimeNow()"), []byte("kprofTimeNow()"))
			return bytes.ReplaceAll(src, []byte("highPrecisionTimeSince("), []byte("kprofTimeSince(")), nil
		})
}

// patchPackage applies patch to the file named base among a standard
// package's compiled files and adds a file of its own (name, text); it
// returns the new file list. It fails closed, naming the package.
func patchPackage(files []string, workDir, goVersion, pkg, base, name, text string, patch func(src []byte, what func(string) error) ([]byte, error)) ([]string, error) {
	what := func(w string) error { return unsupportedPkg(pkg, goVersion, w) }
	out := make([]string, 0, len(files)+1)
	found := false
	for _, f := range files {
		if filepath.Base(f) != base {
			out = append(out, f)
			continue
		}
		found = true
		src, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		if src, err = patch(src, what); err != nil {
			return nil, err
		}
		nf, err := writePatched(workDir, f, src)
		if err != nil {
			return nil, err
		}
		out = append(out, nf)
	}
	if !found {
		return nil, what(base + " not found")
	}
	nf := filepath.Join(workDir, name)
	if err := os.WriteFile(nf, []byte(text), 0o666); err != nil {
		return nil, err
	}
	return append(out, nf), nil
}

func unsupportedPkg(pkg, goVersion, what string) error {
	return fmt.Errorf("kprof: package %s of %s does not have the shape kprof patches (%s); kprof supports %s.x only", pkg, goVersion, what, SupportedGo)
}
