package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kprof/kprof/profile"
)

// Memory and time stay bounded with many goroutines and deep recursion
// (issue 24): the agent's memory follows the goroutines alive and the
// profile's contexts, not the goroutines that have lived; a sample costs
// what changed in the stack, not its depth.

// child is the outcome of one run of a program.
type child struct {
	maxRSS int64         // peak resident set, bytes
	cpu    time.Duration // user + system time
	out    string
}

// runChild runs bin with args and env (on top of the environment) and
// measures it.
func runChild(t testing.TB, bin string, args []string, env ...string) child {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %v %v: %v\n%s", bin, args, env, err, out.String())
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		t.Skip("no rusage on", runtime.GOOS)
	}
	c := child{
		maxRSS: ru.Maxrss * 1024, // kilobytes on Linux
		cpu:    cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(),
		out:    out.String(),
	}
	// Linux's maxrss of a child counts the memory of the process that
	// started it (this test binary, hundreds of MB): a program that
	// reports its own peak (-hwm: a last line "hwm N kB") is taken at its
	// word, the line cut from its output.
	if i := strings.LastIndex(c.out, "hwm "); i >= 0 && (i == 0 || c.out[i-1] == '\n') {
		var kb int64
		if _, err := fmt.Sscanf(c.out[i:], "hwm %d kB\n", &kb); err == nil {
			c.maxRSS, c.out = kb<<10, c.out[:i]
		}
	}
	return c
}

// profileOf runs bin with args in mode and returns its profile; verify
// has the agent check the paths the counter reports unchanged.
func profileOf(t *testing.T, bin, mode string, args []string, verify bool) *profile.Profile {
	t.Helper()
	out := filepath.Join(t.TempDir(), "p.kprof")
	v := "0"
	if verify {
		v = "1"
	}
	runChild(t, bin, args, "KPROF_MODE="+mode, "KPROF_OUT="+out, "KPROF_VERIFY_PATHS="+v)
	p, err := profile.ParseFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// plainBuild builds the program in dir with the go command alone.
func plainBuild(t testing.TB, dir string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), filepath.Base(dir)+"-plain")
	abs, _ := filepath.Abs(dir)
	if out, err := runCmd(abs, nil, "go", "build", "-o", bin, "."); err != nil {
		t.Fatalf("go build %s: %v\n%s", dir, err, out)
	}
	return bin
}

// funcStats returns the instructions below (cum) and the calls of the
// contexts of function name, summed over the profile.
func funcStats(p *profile.Profile, name string) (cum, calls int64) {
	for _, fs := range p.Flat() {
		if fs.Func.Name == name {
			cum = fs.Cum
		}
	}
	p.Walk(func(stack []profile.Func, n *profile.Node) {
		if stack[len(stack)-1].Name == name {
			calls += n.Calls
		}
	})
	return cum, calls
}

// contextSum is the sum of the instructions of a profile's contexts.
func contextSum(p *profile.Profile) int64 {
	var sum int64
	p.Walk(func(_ []profile.Func, n *profile.Node) { sum += n.Instructions })
	return sum
}

// TestGoroutineChurn runs 1,000,000 short goroutines, at most 100 alive at
// once, in sample and exact mode: the peak RSS stays within 64 MB of the
// plain build's (it was 17.6 KB per goroutine that had ever started:
// 1.76 GB for 100,000), and no count is lost — in exact mode main.work
// runs exactly the instructions it runs when the same work runs in one
// goroutine, its calls are counted once per goroutine, and the contexts
// account for every instruction.
func TestGoroutineChurn(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("peak RSS is read from Linux's rusage")
	}
	const goroutines = 1_000_000
	kprofBin := buildKprof(t)
	bin := kprofBuild(t, kprofBin, "../../testdata/churn")
	args := []string{"-n", strconv.Itoa(goroutines), "-alive", "100", "-hwm"}
	plain := runChild(t, plainBuild(t, "../../testdata/churn"), args)
	seq := runProfileArgs(t, bin, "exact", []string{"-n", strconv.Itoa(goroutines), "-seq"})
	seqCum, _ := funcStats(seq, "main.work")
	for _, mode := range []string{"sample", "exact"} {
		t.Run(mode, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "p.kprof")
			c := runChild(t, bin, args, "KPROF_MODE="+mode, "KPROF_OUT="+out, "KPROF_VERIFY_PATHS=1")
			if c.out != plain.out {
				t.Errorf("output %q, plain build %q", c.out, plain.out)
			}
			const slack = 64 << 20
			t.Logf("peak RSS %.1f MB, plain %.1f MB", float64(c.maxRSS)/(1<<20), float64(plain.maxRSS)/(1<<20))
			if c.maxRSS > plain.maxRSS+slack {
				t.Errorf("peak RSS %d MB, plain build %d MB: more than 64 MB above", c.maxRSS>>20, plain.maxRSS>>20)
			}
			p, err := profile.ParseFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if sum := contextSum(p); sum != p.TotalInstructions {
				t.Errorf("total %d instructions, contexts %d: %d lost", p.TotalInstructions, sum, p.TotalInstructions-sum)
			}
			if mode != "exact" {
				return
			}
			cum, calls := funcStats(p, "main.work")
			if cum != seqCum || calls != goroutines {
				t.Errorf("main.work: %d instructions in %d calls, want %d (in one goroutine) in %d", cum, calls, seqCum, goroutines)
			}
		})
	}
}

// TestSequentialGoroutines runs goroutines one after the other that make
// the same 1.1 million calling contexts (a recursion 1,500 deep whose
// level k calls a chain k deep), as a benchmark's runs or a test
// binary's tests do: a goroutine takes the tree those before it left
// instead of growing its own copy (agent.CCT.take), so four runs peak
// where one does (they peaked at 2.4 times one run's memory in exact
// mode, a copy of 70 MB more), and every call is counted.
func TestSequentialGoroutines(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the peak resident set is read from Linux's /proc")
	}
	const n, runs = 1500, 4
	kprofBin := buildKprof(t)
	bin := kprofBuild(t, kprofBin, "../../testdata/seqtrees")
	// peak runs the program and returns its profile and its peak resident
	// set as it reports it (the rusage of a child counts the memory of the
	// test process that starts it).
	peak := func(t *testing.T, mode string, r int) (*profile.Profile, int64) {
		out := filepath.Join(t.TempDir(), "p.kprof")
		c := runChild(t, bin, []string{"-n", strconv.Itoa(n), "-runs", strconv.Itoa(r), "-hwm"}, "KPROF_MODE="+mode, "KPROF_OUT="+out)
		if strings.Contains(c.out, "hwm") {
			t.Fatalf("output %q: no peak resident set read", c.out)
		}
		p, err := profile.ParseFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return p, c.maxRSS
	}
	var exactTotal int64
	for _, mode := range []string{"exact", "sample"} {
		t.Run(mode, func(t *testing.T) {
			_, one := peak(t, mode, 1)
			p, four := peak(t, mode, runs)
			t.Logf("peak resident set: %.1f MB for one run, %.1f MB for %d", float64(one)/(1<<20), float64(four)/(1<<20), runs)
			const slack = 16 << 20
			if four > one+slack {
				t.Errorf("%d runs peak at %d MB, one at %d MB: more than 16 MB above", runs, four>>20, one>>20)
			}
			if sum := contextSum(p); sum != p.TotalInstructions {
				t.Errorf("total %d instructions, contexts %d", p.TotalInstructions, sum)
			}
			if mode == "exact" {
				exactTotal = p.TotalInstructions
				if _, calls := funcStats(p, "main.chain"); calls != runs*n*(n+1)/2 {
					t.Errorf("main.chain: %d calls, want %d", calls, runs*n*(n+1)/2)
				}
			} else if p.TotalInstructions != exactTotal {
				t.Errorf("total %d instructions, exact mode %d", p.TotalInstructions, exactTotal)
			}
		})
	}
}

// TestDeepRecursion compares two lists recursively at depth 100,000: the
// reified stack and the path cache have no cap (the profile has the whole
// path), and exact mode counts every call. The sampled run checks every
// path the counter reports unchanged (KPROF_VERIFY_PATHS).
func TestDeepRecursion(t *testing.T) {
	const depth, reps = 100_000, 3
	kprofBin := buildKprof(t)
	bin := kprofBuild(t, kprofBin, "../../testdata/deeprec")
	args := []string{"-depth", strconv.Itoa(depth), "-reps", strconv.Itoa(reps)}
	deepest := func(p *profile.Profile) int {
		d := 0
		p.Walk(func(stack []profile.Func, _ *profile.Node) { d = max(d, len(stack)) })
		return d
	}
	// (Verifying paths in exact mode would compare the whole stack at
	// each of its 600,000 samples.)
	exact := profileOf(t, bin, "exact", args, false)
	for _, tc := range []struct {
		mode    string
		profile *profile.Profile
		calls   int64 // of main.equal
		deepest int   // at least
	}{
		// equal runs once per element and once at the end of the lists.
		// A sample falls within the granularity of the bottom: 10,000
		// instructions, some hundreds of calls.
		{"exact", exact, reps * (depth + 1), depth + 1},
		{"sample", profileOf(t, bin, "sample", args, true), 0, depth - 1000},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			p := tc.profile
			if d := deepest(p); d < tc.deepest {
				t.Errorf("deepest context %d functions, want at least %d (the recursion is %d deep)", d, tc.deepest, depth)
			}
			if p.TotalInstructions != exact.TotalInstructions {
				t.Errorf("total %d instructions, exact mode %d", p.TotalInstructions, exact.TotalInstructions)
			}
			if sum := contextSum(p); sum != p.TotalInstructions {
				t.Errorf("total %d instructions, contexts %d", p.TotalInstructions, sum)
			}
			if _, calls := funcStats(p, "main.equal"); calls != tc.calls {
				t.Errorf("main.equal: %d calls counted, want %d", calls, tc.calls)
			}
		})
	}
}

// TestChurnRecursionReproducible: the profiles of the churn and recursion
// workloads are byte-identical over five runs, in sample and exact mode,
// and every mode counts the same total.
func TestChurnRecursionReproducible(t *testing.T) {
	kprofBin := buildKprof(t)
	for _, w := range []string{"churn", "recursion"} {
		t.Run(w, func(t *testing.T) {
			bin := kprofBuild(t, kprofBin, "../../bench/workloads/"+w)
			totals := map[string]int64{}
			for _, mode := range []string{"sample", "exact"} {
				var first []byte
				for i := range 5 {
					out := filepath.Join(t.TempDir(), "p.kprof")
					if o, err := runCmd("", []string{"KPROF_MODE=" + mode, "KPROF_OUT=" + out}, bin, "-n", "1"); err != nil {
						t.Fatalf("%s: %v\n%s", mode, err, o)
					}
					data, err := os.ReadFile(out)
					if err != nil {
						t.Fatal(err)
					}
					if i == 0 {
						first = data
						p, err := profile.Parse(bytes.NewReader(data))
						if err != nil {
							t.Fatal(err)
						}
						totals[mode] = p.TotalInstructions
					} else if !bytes.Equal(data, first) {
						t.Errorf("%s: run %d's profile differs from run 1's", mode, i+1)
					}
				}
			}
			if totals["sample"] != totals["exact"] {
				t.Errorf("total %d instructions sampled, %d exact", totals["sample"], totals["exact"])
			}
		})
	}
}

// BenchmarkDeepRecursion runs a recursive list comparison at depth 20,000,
// 1,000 times, in the modes off, sample and exact, one run of each per
// iteration, and reports the CPU time of each mode against off's: a
// sample costs what changed in the stack since the previous one, so the
// recursion returning and descending again is not quadratic (sample mode
// was 5.4 times off, and exact mode did not finish in 120 s). CPU time,
// not wall time: the machines are shared.
func BenchmarkDeepRecursion(b *testing.B) {
	bin := kprofBuild(b, buildKprof(b), "../../testdata/deeprec")
	benchModes(b, bin, []string{"-depth", "20000", "-reps", "1000", "-hwm"})
}

// BenchmarkCallTree runs testdata/calltree, a loop over a small tree of
// small calls, as BenchmarkDeepRecursion runs its recursion: exact mode's
// cost per call (13.95 times off's CPU time, sample 1.09, on 2026-11-27, where
// RoaringBitmap's TestFlipBigACOW measured 13.5 times).
func BenchmarkCallTree(b *testing.B) {
	bin := kprofBuild(b, buildKprof(b), "../../testdata/calltree")
	benchModes(b, bin, []string{"-n", "1000000", "-rounds", "3", "-hwm"})
}

// BenchmarkGoroutineChurn runs 100,000 short goroutines, at most 100 alive
// at once, as BenchmarkDeepRecursion runs its recursion; it also reports
// the peak RSS of each mode.
func BenchmarkGoroutineChurn(b *testing.B) {
	bin := kprofBuild(b, buildKprof(b), "../../testdata/churn")
	benchModes(b, bin, []string{"-n", "100000", "-alive", "100", "-hwm"})
}

// BenchmarkSequentialGoroutines runs TestSequentialGoroutines' program,
// four goroutines one after the other that make the same 1.1 million
// contexts, as BenchmarkDeepRecursion runs its recursion: its MB-exact
// and MB-sample are those of one tree.
func BenchmarkSequentialGoroutines(b *testing.B) {
	bin := kprofBuild(b, buildKprof(b), "../../testdata/seqtrees")
	benchModes(b, bin, []string{"-n", "1500", "-runs", "4", "-hwm"})
}

// benchModes runs bin with args in modes off, sample and exact, once per
// iteration each, and reports each mode's CPU time against off's and its
// peak RSS.
func benchModes(b *testing.B, bin string, args []string) {
	modes := []string{"off", "sample", "exact"}
	cpu := map[string]time.Duration{}
	rss := map[string]int64{}
	dir := b.TempDir()
	for i := 0; i < b.N; i++ {
		for _, m := range modes {
			c := runChild(b, bin, args, "KPROF_MODE="+m, "KPROF_OUT="+filepath.Join(dir, m+".kprof"))
			cpu[m] += c.cpu
			rss[m] = max(rss[m], c.maxRSS)
		}
	}
	for _, m := range modes {
		if m != "off" {
			b.ReportMetric(float64(cpu[m])/float64(cpu["off"]), m+"/off")
		}
		b.ReportMetric(float64(rss[m])/(1<<20), fmt.Sprintf("MB-%s", m))
	}
}

// TestContextBudget runs testdata/nesting, encoding/asn1's shape: a
// recursion whose every level starts another as deep as what is left,
// depth²/2 calling contexts (asn1's own nesting-limit test made 50
// million and took 4.35 GB sampled). Each goroutine may add at most
// KPROF_MAX_CONTEXTS contexts; beyond them its stacks keep their innermost
// function below an overflow context. In exact mode every function keeps
// its exact own instructions and calls; with goroutines that run at once
// the profile is the same on every run; and at asn1's depth the peak
// resident set stays within 64 MB of the plain build's.
func TestContextBudget(t *testing.T) {
	kprofBin := buildKprof(t)
	bin := kprofBuild(t, kprofBin, "../../testdata/nesting")
	t.Run("exact", func(t *testing.T) {
		args := []string{"-depth", "600", "-par", "3", "-reps", "2"}
		full := runProfileArgs(t, bin, "exact", args)
		const max = 5000
		bounded := runProfileArgs(t, bin, "exact", args, fmt.Sprintf("KPROF_MAX_CONTEXTS=%d", max))
		if full.Overflowed() != 0 {
			t.Fatalf("%d instructions overflowed the default budget", full.Overflowed())
		}
		if bounded.Overflowed() == 0 {
			t.Fatalf("no overflow at a budget of %d contexts", max)
		}
		nf, nb := countContexts(full), countContexts(bounded)
		t.Logf("%d contexts, %d with a budget of %d per goroutine; %d instructions of %d overflowed", nf, nb, max, bounded.Overflowed(), bounded.TotalInstructions)
		// (Three goroutines, each with a budget, and the overflow
		// contexts: one per context a stack left, times the functions.)
		if nb > 3*max*2 || nf < 100_000 {
			t.Errorf("%d contexts with a budget of %d per goroutine (%d without)", nb, max, nf)
		}
		if full.TotalInstructions != bounded.TotalInstructions {
			t.Errorf("total %d instructions with a budget, %d without", bounded.TotalInstructions, full.TotalInstructions)
		}
		fs, bs := flatSelfCalls(full), flatSelfCalls(bounded)
		delete(bs, profile.OverflowName)
		if fmt.Sprint(fs) != fmt.Sprint(bs) {
			t.Errorf("own instructions and calls per function:\n%v\nwith a budget:\n%v", bs, fs)
		}
	})
	t.Run("sample", func(t *testing.T) {
		if runtime.GOOS != "linux" {
			t.Skip("peak RSS is read from Linux's /proc")
		}
		args := []string{"-depth", "10000", "-par", "2", "-hwm"}
		plain := runChild(t, plainBuild(t, "../../testdata/nesting"), args)
		var first []byte
		for i := range 3 {
			out := filepath.Join(t.TempDir(), "p.kprof")
			c := runChild(t, bin, args, "KPROF_MODE=sample", "KPROF_OUT="+out, "KPROF_MAX_CONTEXTS=200000")
			t.Logf("run %d: peak RSS %.1f MB, plain %.1f MB", i, float64(c.maxRSS)/(1<<20), float64(plain.maxRSS)/(1<<20))
			if c.out != plain.out {
				t.Errorf("output %q, plain build %q", c.out, plain.out)
			}
			if c.maxRSS > plain.maxRSS+64<<20 {
				t.Errorf("peak RSS %d MB, plain build %d MB: more than 64 MB above", c.maxRSS>>20, plain.maxRSS>>20)
			}
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				first = b
				p, err := profile.ParseFile(out)
				if err != nil {
					t.Fatal(err)
				}
				if p.Overflowed() == 0 {
					t.Errorf("no overflow")
				}
			} else if !bytes.Equal(b, first) {
				t.Errorf("run %d: profile differs from run 0's", i)
			}
		}
	})
}

// countContexts returns the number of calling contexts of p.
func countContexts(p *profile.Profile) int {
	n := 0
	p.Walk(func([]profile.Func, *profile.Node) { n++ })
	return n
}

// flatSelfCalls returns each function's own instructions and calls.
func flatSelfCalls(p *profile.Profile) map[string][2]int64 {
	m := map[string][2]int64{}
	p.Walk(func(stack []profile.Func, n *profile.Node) {
		k := stack[len(stack)-1].Name
		v := m[k]
		m[k] = [2]int64{v[0] + n.Instructions, v[1] + n.Calls}
	})
	return m
}

// TestStackBufferPerGoroutine runs testdata/gostack, sampled: two
// goroutines, one after the other, make the same deep recursion from
// their own functions, the second usually on the g the first left. A
// push beyond a goroutine's stack buffer is lost until a sample grows the
// buffer, and the buffer stays with the g: the second goroutine started
// with the first's, lost fewer frames, and profiles differed with the
// goroutines' placement (go-toml's deep test, 5 runs overlapping 99.87 to
// 99.99 %). Every goroutine now starts with a buffer of the same length,
// so the two subtrees are the same.
func TestStackBufferPerGoroutine(t *testing.T) {
	kprofBin := buildKprof(t)
	bin := kprofBuild(t, kprofBin, "../../testdata/gostack")
	p := runProfileArgs(t, bin, "sample", []string{"-depth", "3000", "-reps", "20"}, "KPROF_GRAN=1000", "KPROF_JITTER=0")
	subtree := func(name string) map[string]int64 {
		m := map[string]int64{}
		p.Walk(func(stack []profile.Func, n *profile.Node) {
			for i, f := range stack {
				if f.Name == name {
					var key []string
					for _, g := range stack[i+1:] {
						key = append(key, g.Name)
					}
					m[strings.Join(key, ";")] += n.Instructions
					return
				}
			}
		})
		return m
	}
	a, b := subtree("main.first"), subtree("main.second")
	if len(a) == 0 {
		t.Fatal("no contexts below main.first")
	}
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("the two goroutines' subtrees differ: %d contexts below main.first, %d below main.second", len(a), len(b))
	}
}
