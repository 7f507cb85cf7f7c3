package main

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kprof/kprof/cost"
	"github.com/kprof/kprof/profile"
)

// TestCostAgainstOracle builds every testdata program with -metric cost
// (the shipped table; fig4 and switches also with the rewrite tests'
// table given by -costtable), runs
// them in exact mode and compares the profile's total, each function's
// and each calling context's picoseconds with the interpreter oracle's
// count weighted by the same table; the profile names the metric and the
// table.
func TestCostAgainstOracle(t *testing.T) {
	heavy(t)
	kprofBin := buildKprof(t)
	testTable, err := filepath.Abs("../../rewrite/testdata/test.costtable")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(testTable)
	if err != nil {
		t.Fatal(err)
	}
	tt, err := cost.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	// The shipped table, but for append's growth, which the runtime
	// charges by capacities the interpreter does not reproduce
	// (TestCostGrowth checks it).
	def, defFile := noGrowth(t, cost.Default())
	dirs, _ := filepath.Glob("../../testdata/progs/*")
	if len(dirs) < 10 {
		t.Fatalf("want at least 10 oracle programs, have %d", len(dirs))
	}
	for _, tc := range []struct {
		name  string
		tbl   *cost.Table
		flags []string
	}{
		{"default", def, []string{"-metric", "cost", "-costtable", defFile}},
		{"costtable", tt, []string{"-metric=cost", "-costtable", testTable}},
	} {
		i := 0
		for _, dir := range dirs {
			prog := filepath.Base(dir)
			if tc.name == "costtable" && prog != "fig4" && prog != "switches" {
				continue // one build of the standard library per table is enough
			}
			n := i
			i++
			t.Run(tc.name+"/"+prog, func(t *testing.T) {
				parallelAfter(t, n)
				dir := oracleSized(t, dir)
				want := oracleWeighted(t, filepath.Join(dir, "main.go"), "", tc.tbl)
				bin := kprofBuild(t, kprofBin, dir, append([]string{"-pkgs", "main"}, tc.flags...)...)
				p := runProfile(t, bin, "exact")
				if p.Meta.Metric != "cost" || p.Meta.MetricTable != tc.tbl.Ident() {
					t.Errorf("profile metric %q table %q, want cost and %q", p.Meta.Metric, p.Meta.MetricTable, tc.tbl.Ident())
				}
				compareOracle(t, p, fmt.Sprint(tc.flags), want)
			})
		}
	}
}

// noGrowth returns t with append's growth uncharged, and a file that
// holds it.
func noGrowth(t *testing.T, tbl *cost.Table) (*cost.Table, string) {
	t.Helper()
	u := *tbl
	u.Weights = maps.Clone(tbl.Weights)
	u.Weights[cost.GrowClass], u.Weights[cost.GrowByteClass] = 0, 0
	file := filepath.Join(t.TempDir(), "nogrowth.costtable")
	if err := os.WriteFile(file, u.Format(), 0o666); err != nil {
		t.Fatal(err)
	}
	back, err := cost.Parse(u.Format())
	if err != nil {
		t.Fatal(err)
	}
	return back, file
}

// TestCostGrowth checks what the runtime charges under the cost metric:
// each function's exact cost with the shipped table is its cost without
// run-time charges plus append.grow per growth and append.byte per byte
// of the new capacities, and append.byte per byte of the slices it makes
// and of the strings and slices it concatenates and converts on the heap,
// which the program itself records; two runs give the same profile, byte
// for byte. Only main and strings are counted: what fmt, which is not,
// allocates in main's last statement is charged to main, and must be
// sampled there, on main's way out, not in the goroutine's last sample
// (builds'), where it went before the pops checked for it (charged).
func TestCostGrowth(t *testing.T) {
	heavy(t)
	kprofBin := buildKprof(t)
	def := cost.Default()
	obj, perByte := def.Growth()
	if obj == 0 || perByte == 0 {
		t.Fatalf("the shipped table charges no growth: %d, %d", obj, perByte)
	}
	_, offFile := noGrowth(t, def)
	dir := "../../testdata/growth"
	on := kprofBuild(t, kprofBin, dir, "-pkgs", "main,strings", "-metric", "cost")
	off := kprofBuild(t, kprofBin, dir, "-pkgs", "main,strings", "-metric", "cost", "-costtable", offFile)
	flat := func(bin string) (map[string]int64, []byte, string) {
		p, data, out := runProfileRaw(t, bin, "exact", nil)
		m := map[string]int64{}
		for _, s := range p.Flat() {
			m[s.Func.Name] += s.Self
		}
		return m, data, out
	}
	a, data1, out := flat(on)
	_, data2, _ := flat(on)
	b, _, _ := flat(off)
	if string(data1) != string(data2) {
		t.Errorf("two exact runs of the cost build differ")
	}
	var total, grows, bytes, makes, concats, converts, builds int64
	if _, err := fmt.Sscan(out, &total, &grows, &bytes, &makes, &concats, &converts, &builds); err != nil || grows == 0 {
		t.Fatalf("the program printed %q: %v", out, err)
	}
	extra := func(fn string) int64 { return a["main."+fn] - b["main."+fn] }
	// points makes a slice of 3 points (72 bytes) that escapes: the
	// runtime charges its bytes, and the table without run-time charges
	// weighs them as the make's (alloc.byte).
	pointsMake := 72 * (perByte - def.Class("alloc.byte"))
	if got, want := extra("ints")+extra("points")-pointsMake, grows*obj+bytes*perByte; got != want {
		t.Errorf("growth charged %d ps, want %d growths × %d + %d bytes × %d = %d", got, grows, obj, bytes, perByte, want)
	}
	for _, c := range []struct {
		fn    string
		bytes int64
	}{
		{"noGrowth", 5000}, // make([]byte, 0, 5000), returned
		{"makes", makes},
		{"concats", concats},
		{"converts", converts},
	} {
		if got, want := extra(c.fn), c.bytes*perByte; got != want {
			t.Errorf("%s: run-time charges %d ps, want %d bytes × %d = %d", c.fn, got, c.bytes, perByte, want)
		}
	}
	// strings.Builder's growth is strings' own allocation
	// (bytealg.MakeNoZero), charged to strings' loop-free functions or,
	// where no check follows in them, to their caller, builds. (main's
	// are fmt's, which the program does not record.)
	var got int64
	for fn := range a {
		if fn == "main.builds" || strings.HasPrefix(fn, "strings.") {
			got += a[fn] - b[fn]
		}
	}
	if want := builds * perByte; got != want {
		t.Errorf("builds and strings: run-time charges %d ps, want %d bytes × %d = %d", got, builds, perByte, want)
	}
}

// TestCostGranularity checks that a sampled run of a cost build samples
// every 10000 instructions' worth of picoseconds by default (the table's
// scale), and that kprof compare and merge refuse to mix a cost profile
// with an instruction one.
func TestCostGranularity(t *testing.T) {
	heavy(t)
	kprofBin := buildKprof(t)
	dir := oracleSized(t, "../../testdata/progs/fig4")
	costBin := kprofBuild(t, kprofBin, dir, "-pkgs", "main", "-metric", "cost")
	instrBin := kprofBuild(t, kprofBin, dir, "-pkgs", "main")
	p := runProfile(t, costBin, "sample")
	scale := cost.Default().Scale
	if p.Meta.Granularity != 10000*scale || p.Meta.Jitter != 100*scale {
		t.Errorf("granularity %d jitter %d, want %d and %d", p.Meta.Granularity, p.Meta.Jitter, 10000*scale, 100*scale)
	}
	tmp := t.TempDir()
	a, b := filepath.Join(tmp, "instr.kprof"), filepath.Join(tmp, "cost.kprof")
	for _, x := range []struct{ bin, out string }{{instrBin, a}, {costBin, b}} {
		if out, err := runCmd("", []string{"KPROF_MODE=exact", "KPROF_OUT=" + x.out}, x.bin); err != nil {
			t.Fatalf("%s: %v\n%s", x.bin, err, out)
		}
	}
	for _, args := range [][]string{{"compare", a, b}, {"report", a, b}} {
		out, err := runCmd("", nil, kprofBin, args...)
		if err == nil || !strings.Contains(out, profile.ErrMetric.Error()) || strings.Count(strings.TrimSpace(out), "\n") != 0 {
			t.Errorf("kprof %s of an instruction and a cost profile: %v, want one line saying %q:\n%s", args[0], err, profile.ErrMetric, out)
		}
	}
}

// TestBadMetric checks that kprof build rejects an unknown metric, a
// table without -metric cost and a malformed table in one line, exit
// status 2.
func TestBadMetric(t *testing.T) {
	kprofBin := buildKprof(t)
	bad := filepath.Join(t.TempDir(), "bad.costtable")
	if err := os.WriteFile(bad, []byte("name x\nscale 400\nother 1\nint.arith -3\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	dirs, _ := filepath.Glob("../../testdata/progs/*")
	if len(dirs) < 10 {
		t.Fatalf("want at least 10 oracle programs, have %d", len(dirs))
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-metric", "time"}, `kprof: -metric="time": want instructions or cost`},
		{[]string{"-costtable", bad}, "kprof: -costtable " + bad + " needs -metric cost"},
		{[]string{"-metric", "cost", "-costtable", bad}, "kprof: -costtable " + bad + `: line 4: int.arith "-3": want an integer number of picoseconds from 1 to 10^12`},
		{[]string{"-metric", "cost", "-costtable", bad + ".missing"}, "kprof: -costtable: open " + bad + ".missing: no such file or directory"},
	} {
		out, err := runCmd("../../testdata/progs/fig4", nil, kprofBin, append([]string{"build", "-o", os.DevNull}, append(tc.args, ".")...)...)
		var exit *exec.ExitError
		code := 0
		if errors.As(err, &exit) {
			code = exit.ExitCode()
		}
		if code != 2 || strings.TrimSpace(out) != tc.want {
			t.Errorf("kprof build %q: exit %d\n%s\nwant exit 2 and\n%s", tc.args, code, out, tc.want)
		}
	}
}

// TestCostGate runs testdata/costgate's benchmark with and without one
// allocation per operation (-tags alloc): instructions/op moves by less
// than 1 %, the cost metric's exact ns/op-est (declared exact for
// benchstat) by more than the gate's default threshold, and kprof gate
// --unit ns/op-est fails the change while the instruction gate passes it.
func TestCostGate(t *testing.T) {
	heavy(t)
	kprofBin := buildKprof(t)
	dir, _ := filepath.Abs("../../testdata/costgate")
	tmp := t.TempDir()
	run := func(name string, args ...string) (string, float64, float64) {
		env := []string{"KPROF_OUT=" + filepath.Join(tmp, "test.kprof")}
		out, err := runCmd(dir, env, kprofBin, append([]string{"test", "-run", "^$", "-bench", "."}, args...)...)
		if err != nil {
			t.Fatalf("kprof test -bench %v: %v\n%s", args, err, out)
		}
		path := filepath.Join(tmp, name)
		if err := os.WriteFile(path, []byte(out), 0o666); err != nil {
			t.Fatal(err)
		}
		var instr, est float64
		for _, line := range strings.Split(out, "\n") {
			f := strings.Fields(line)
			for i := 1; i < len(f); i++ {
				switch f[i] {
				case "instructions/op":
					instr, _ = strconv.ParseFloat(f[i-1], 64)
				case "ns/op-est":
					est, _ = strconv.ParseFloat(f[i-1], 64)
				}
			}
		}
		if strings.Contains(strings.Join(args, " "), "cost") != strings.Contains(out, "Unit ns/op-est assume=exact") {
			t.Errorf("%s: unit line\n%s", name, out)
		}
		return path, instr, est
	}
	_, i0, _ := run("instr-old.txt")
	_, i1, _ := run("instr-new.txt", "-tags", "alloc")
	old, _, e0 := run("cost-old.txt", "-metric", "cost")
	new, _, e1 := run("cost-new.txt", "-metric", "cost", "-tags", "alloc")
	if i0 == 0 || e0 == 0 {
		t.Fatalf("instructions/op %v, ns/op-est %v", i0, e0)
	}
	t.Logf("instructions/op %v → %v (%+.2f%%), ns/op-est %v → %v (%+.1f%%)", i0, i1, 100*(i1-i0)/i0, e0, e1, 100*(e1-e0)/e0)
	if d := (i1 - i0) / i0; d < 0 || d >= 0.01 {
		t.Errorf("instructions/op moves %+.2f%%, want less than 1%%", 100*d)
	}
	if d := (e1 - e0) / e0; d <= 0.01 {
		t.Errorf("ns/op-est moves %+.2f%%, want more than the 1%% threshold", 100*d)
	}
	out, err := runCmd("", nil, kprofBin, "gate", "--unit", "ns/op-est", old, new)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Errorf("kprof gate --unit ns/op-est: %v, want exit status 1\n%s", err, out)
	}
	if out, err := runCmd("", nil, kprofBin, "gate", filepath.Join(tmp, "instr-old.txt"), filepath.Join(tmp, "instr-new.txt")); err != nil {
		t.Errorf("kprof gate on instructions/op: %v, want a pass\n%s", err, out)
	}
}

// TestCostTableMissing checks that kprof build builds with a table that
// leaves classes out (one written by an older kprof) and names them in a
// warning.
func TestCostTableMissing(t *testing.T) {
	heavy(t)
	kprofBin := buildKprof(t)
	var lines []string
	for _, l := range strings.Split(string(cost.Default().Format()), "\n") {
		if !strings.HasPrefix(l, "call.inline ") && !strings.HasPrefix(l, "return.inline ") {
			lines = append(lines, l)
		}
	}
	old := filepath.Join(t.TempDir(), "old.costtable")
	if err := os.WriteFile(old, []byte(strings.Join(lines, "\n")), 0o666); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "fig4")
	// (-pkgs main: the warning needs no build of the standard library
	// with this table.)
	out, err := runCmd("../../testdata/progs/fig4", nil, kprofBin, "build", "-pkgs", "main", "-metric", "cost", "-costtable", old, "-o", bin, ".")
	if err != nil {
		t.Fatalf("kprof build: %v\n%s", err, out)
	}
	want := "kprof: warning: -costtable " + old + " has no weight for call.inline, return.inline: they weigh what \"other\" does"
	if !strings.Contains(out, want) {
		t.Errorf("kprof build printed\n%s\nwant a line starting %q", out, want)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Error(err)
	}
}
