// Command ab compares kprof builds by wall-clock time: it builds each
// workload of bench/workloads with go build and with each given kprof
// binary, then runs them interleaved — each round runs every build once —
// and prints the medians, their ratios to the plain build's and, over
// several workloads, each build's geometric mean of them. Whole runs
// of the evaluation harness on a shared machine differ by a few hundredths;
// interleaving puts the builds being compared under the same load.
//
//	go run ./bench/ab [-rounds 7] [-mode off] NAME=KPROF... -- WORKLOAD...
//
// Each NAME=KPROF is a kprof binary (built, say, at the commits before and
// after a change); -mode sets KPROF_MODE for the runs (off: No Prof.).
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/gonum/stat"
)

type build struct{ name, kprof string }

func main() {
	rounds := flag.Int("rounds", 7, "runs of each build, interleaved")
	mode := flag.String("mode", "off", "KPROF_MODE of the runs: off, sample or exact")
	work := flag.String("work", "", "directory for the builds (default: a temporary one)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: go run ./bench/ab [-rounds N] [-mode M] NAME=KPROF... -- WORKLOAD...")
		flag.PrintDefaults()
	}
	flag.Parse()
	args := flag.Args()
	sep := slices.Index(args, "--")
	if sep < 1 || sep == len(args)-1 || *rounds < 1 {
		flag.Usage()
		os.Exit(2)
	}
	builds := []build{{name: "plain"}}
	for _, a := range args[:sep] {
		name, kprof, ok := strings.Cut(a, "=")
		if !ok || name == "" || name == "plain" {
			fatalf("%q: want NAME=KPROF (a name other than plain, a kprof binary)", a)
		}
		abs, err := filepath.Abs(kprof)
		if err != nil {
			fatalf("%v", err)
		}
		builds = append(builds, build{name, abs})
	}
	workloads := args[sep+1:]
	for _, w := range workloads {
		if _, err := os.Stat(filepath.Join("bench", "workloads", w, "main.go")); err != nil {
			fatalf("%s: not a workload of bench/workloads (run ab from the repository root)", w)
		}
	}
	dir := *work
	if dir == "" {
		d, err := os.MkdirTemp("", "kprof-ab-")
		if err != nil {
			fatalf("%v", err)
		}
		defer os.RemoveAll(d)
		dir = d
	}
	bin := func(w string, b build) string { return filepath.Join(dir, w+"."+b.name) }
	for _, w := range workloads {
		pkg := "./bench/workloads/" + w
		for _, b := range builds {
			cmd := exec.Command("go", "build", "-o", bin(w, b), pkg)
			if b.kprof != "" {
				cmd = exec.Command(b.kprof, "build", "-o", bin(w, b), pkg)
			}
			fmt.Fprintf(os.Stderr, "ab: build %s %s\n", w, b.name)
			if out, err := cmd.CombinedOutput(); err != nil {
				fatalf("building %s with %s: %v\n%s", w, b.name, err, out)
			}
		}
	}
	times := make(map[string][]float64)
	for r := 1; r <= *rounds; r++ {
		for _, w := range workloads {
			for _, b := range builds {
				cmd := exec.Command(bin(w, b))
				cmd.Env = append(os.Environ(), "KPROF_MODE="+*mode, "KPROF_OUT="+filepath.Join(dir, "profile.kprof"))
				start := time.Now()
				if out, err := cmd.CombinedOutput(); err != nil {
					fatalf("%s %s: %v\n%s", w, b.name, err, out)
				}
				d := time.Since(start).Seconds()
				times[w+"."+b.name] = append(times[w+"."+b.name], d)
				fmt.Fprintf(os.Stderr, "ab: round %d/%d: %s %s %.2f s\n", r, *rounds, w, b.name, d)
			}
		}
	}
	ratios := make([][]float64, len(builds))
	for _, w := range workloads {
		plain := median(times[w+".plain"])
		fmt.Printf("%s: plain %.2f s", w, plain)
		for i, b := range builds[1:] {
			m := median(times[w+"."+b.name])
			fmt.Printf(", %s %.2f s (%.3f×)", b.name, m, m/plain)
			ratios[i] = append(ratios[i], m/plain)
		}
		fmt.Println()
	}
	if len(workloads) > 1 {
		fmt.Print("geo. mean")
		for i, b := range builds[1:] {
			fmt.Printf(", %s %.3f×", b.name, stat.GeometricMean(ratios[i], nil))
		}
		fmt.Println()
	}
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "ab: "+format+"\n", args...)
	os.Exit(1)
}
