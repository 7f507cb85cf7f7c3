// Command overhead shows where the instructions an instrumented program
// executes beyond the plain build's go ("No Prof.", KPROF_MODE=off): it
// builds each workload of bench/workloads with go build and with kprof
// build, runs both under Valgrind's callgrind (one goroutine at a time,
// GOMAXPROCS=1, asynchronous preemption off), and sorts every executed
// instruction by what it does — the runtime's, reads and writes of the
// goroutine's count, of the reified stack, moves to and from stack slots
// (spills), conditional jumps, NOPs, and the rest — decoding the machine
// code with golang.org/x/arch/x86/x86asm and finding kprof's fields in
// runtime.g from the debugging information. Instruction counts are exact
// and repeatable, unlike times on a shared machine; the runtime's share
// moves with the collector's timing.
//
// Usage, from anywhere in the kprof module, on linux/amd64 with valgrind
// installed:
//
//	go run ./bench/overhead [-n ARG] [-work DIR] WORKLOAD...
//
// -n is passed to every workload as its problem size (default 1: a run of
// a few seconds under callgrind). The report is a markdown table per
// workload on standard output.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/kprof/kprof/toolchain"
)

func main() {
	n := flag.String("n", "1", "problem size passed to each workload")
	work := flag.String("work", "", "directory for binaries and callgrind output (default: a temporary one, removed)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: go run ./bench/overhead [-n ARG] [-work DIR] WORKLOAD...")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(context.Background(), os.Stdout, *n, *work, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "overhead:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, w io.Writer, n, work string, workloads []string) error {
	if _, err := exec.LookPath("valgrind"); err != nil {
		return fmt.Errorf("valgrind is not installed (apt-get install valgrind)")
	}
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil || strings.TrimSpace(string(out)) == "" {
		return fmt.Errorf("run it inside the kprof module")
	}
	root := filepath.Dir(strings.TrimSpace(string(out)))
	if work == "" {
		if work, err = os.MkdirTemp("", "kprof-overhead-"); err != nil {
			return err
		}
		defer os.RemoveAll(work)
	} else if err := os.MkdirAll(work, 0o777); err != nil {
		return err
	}
	step := func(what string, name string, args ...string) error {
		fmt.Fprintf(os.Stderr, "overhead: %s\n", what)
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%s: %v\n%s", what, err, out)
		}
		return nil
	}
	kprof := filepath.Join(work, "kprof")
	fmt.Fprintf(os.Stderr, "overhead: go build ./cmd/kprof\n")
	if err := toolchain.BuildKprof(root, kprof); err != nil {
		return err
	}
	for _, wl := range workloads {
		pkg := "./bench/workloads/" + wl
		if _, err := os.Stat(filepath.Join(root, pkg)); err != nil {
			return fmt.Errorf("no workload %q in bench/workloads", wl)
		}
		var totals [2][numCategories]int64
		for i, build := range []string{"plain", "kprof"} {
			bin := filepath.Join(work, wl+"."+build)
			if build == "plain" {
				err = step("go build "+pkg, "go", "build", "-o", bin, pkg)
			} else {
				err = step("kprof build "+pkg, kprof, "build", "-o", bin, pkg)
			}
			if err != nil {
				return err
			}
			cg := bin + ".callgrind"
			fmt.Fprintf(os.Stderr, "overhead: callgrind %s -n %s\n", filepath.Base(bin), n)
			cmd := exec.CommandContext(ctx, "valgrind", "--tool=callgrind", "--dump-instr=yes", "--callgrind-out-file="+cg, bin, "-n", n)
			cmd.Env = append(os.Environ(), "GOMAXPROCS=1", "GODEBUG=asyncpreemptoff=1", "KPROF_MODE=off")
			if out, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("callgrind %s: %v\n%s", bin, err, out)
			}
			f, err := os.Open(cg)
			if err != nil {
				return err
			}
			counts, err := parseCallgrind(f)
			f.Close()
			if err != nil {
				return fmt.Errorf("%s: %v", cg, err)
			}
			b, err := readBinary(bin)
			if err != nil {
				return err
			}
			if totals[i], err = tally(counts, b); err != nil {
				return fmt.Errorf("%s: %v", bin, err)
			}
		}
		report(w, wl, n, totals[0], totals[1])
	}
	return nil
}

// report writes one workload's table. Shares are of the extra
// instructions in the program's own code: the runtime's move with the
// collector's timing from run to run.
func report(w io.Writer, wl, n string, plain, kprof [numCategories]int64) {
	var sumP, sumK int64
	for c := range plain {
		sumP += plain[c]
		sumK += kprof[c]
	}
	ownP, ownK := sumP-plain[catRuntime], sumK-kprof[catRuntime]
	extra := ownK - ownP
	fmt.Fprintf(w, "\n### %s (-n %s)\n\n", wl, n)
	fmt.Fprintf(w, "kprof build, KPROF_MODE=off: %d instructions, %.3f× the plain build's %d; in the program's own code (the runtime apart) %.3f×.\n\n",
		sumK, float64(sumK)/float64(sumP), sumP, float64(ownK)/float64(ownP))
	fmt.Fprintln(w, "| instructions | plain | kprof | extra | share of the program's extra |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: |")
	for c := category(0); c < numCategories; c++ {
		d := kprof[c] - plain[c]
		share := "–"
		if c != catRuntime && extra != 0 {
			share = fmt.Sprintf("%.1f %%", 100*float64(d)/float64(extra))
		}
		fmt.Fprintf(w, "| %s | %d | %d | %+d | %s |\n", categoryNames[c], plain[c], kprof[c], d, share)
	}
	fmt.Fprintf(w, "| all | %d | %d | %+d | |\n", sumP, sumK, sumK-sumP)
}
