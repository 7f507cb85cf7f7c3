package main

// -fit: the shipped table, fitted on the workloads, with leave-one-out
// validation.
//
// A profile is linear in the table: each context's count is Σ_c w_c·n_c,
// n_c its instructions of class c. kprof build with a base table B (every
// class 1 ps, alloc.byte 1 ps per byte) and with B plus 1 ps on the
// classes of one group g gives, per function, exactly its instructions of
// group g (the difference of the two exact profiles). Those counts,
// against each function's share of the merged pprof CPU profiles of the
// plain build, fit one weight per group (non-negative least squares, each
// workload's rows scaled by its CPU time so that every workload weighs
// alike). Leave-one-out: the weights fitted on all workloads but W give
// W's cost profile (Σ_g w_g·counts_g, exact by linearity) for the flat
// overlap and the total; no held-out workload's profile takes part in its
// own fit. The fit is pulled weakly towards a prior table (the shipped
// one, or -costtable): rows λ·(w_g − prior_g)/prior_g, as kprof calibrate
// does.

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/kprof/kprof/bench/internal/pprofconv"
	"github.com/kprof/kprof/cost"
	"github.com/kprof/kprof/cost/calibrate"
	"github.com/kprof/kprof/overlap"
	"github.com/kprof/kprof/profile"
)

// groups partition cost.Classes: the weights fitted on workloads.
var groups = []struct {
	name    string
	classes []string
}{
	{"alu", []string{"int.arith", "int.cmp", "convert.num", "changetype", "extract", "field", "local.load", "local.store", "local.addr", "alloc.local", "jump", "if", "call.inline", "return.inline", "other"}},
	{"mem", []string{"load", "store", "fieldaddr", "indexaddr", "index", "slice", "call.builtin"}},
	{"muldiv", []string{"int.mul", "int.div", "int.divconst", "float.div"}},
	{"float", []string{"float.arith", "float.cmp", "complex"}},
	{"call", []string{"call.static", "call.closure", "call.invoke", "call.copy", "return", "rundefers", "defer", "panic"}},
	{"iface", []string{"iface.make", "iface.change", "assert.type", "assert.iface", "value.cmp", "string.cmp"}},
	{"alloc", []string{"alloc.heap", "make.slice", "make.map", "make.chan", "make.closure", "iface.box", "string.concat", "convert.string", "call.append", "append.value", "append.grow"}},
	{"map", []string{"map.lookup", "map.update", "range", "next"}},
	{"chan", []string{"send", "recv", "select", "go"}},
	{"uncounted", []string{"call.uncounted"}},
	{"bytes", []string{"alloc.byte", "append.byte"}},
}

// groupTable returns the base table (g == "") or the base plus 1 on g.
func groupTable(g string) *cost.Table {
	name := "fit-base"
	if g != "" {
		name = "fit-" + g
	}
	t := &cost.Table{Name: name, Scale: 1, Weights: map[string]int64{}}
	for _, gr := range groups {
		for _, c := range gr.classes {
			t.Weights[c] = 1
			if gr.name == g {
				t.Weights[c] = 2
			}
		}
	}
	return t
}

// fitData is one workload's measurements.
type fitData struct {
	name             string
	n                int
	samples, dropped int64
	pprof            map[string]float64            // function → ns per run (merged pprof)
	counts           map[string]map[string]float64 // group → function → instructions of the group
	funcs            map[string]profile.Func
	cpuNS            float64
	halves           float64 // cpuRef.halves
	total            float64 // ns per run of all kept pprof samples
	instr            *profile.Profile
	merged           *profile.Profile
}

func fit(ctx context.Context, cfg *config, root, kprof string, filter *pprofconv.Filter) error {
	prior := cost.Default()
	if cfg.table != "" {
		data, err := os.ReadFile(cfg.table)
		if err != nil {
			return err
		}
		if prior, err = cost.Parse(data); err != nil {
			return fmt.Errorf("%s: %v", cfg.table, err)
		}
	}
	tables := map[string]string{}
	for _, g := range append([]string{""}, groupNames()...) {
		path := filepath.Join(cfg.work, "table-"+strings.TrimPrefix(groupTable(g).Name, "fit-")+".txt")
		if err := os.WriteFile(path, groupTable(g).Format(), 0o666); err != nil {
			return err
		}
		tables[g] = path
	}
	var data []*fitData
	for _, w := range cfg.workloads {
		d, err := fitWorkload(ctx, cfg, root, kprof, filter, tables, w)
		if err != nil {
			return fmt.Errorf("%s: %v", w, err)
		}
		data = append(data, d)
	}
	// Leave one out.
	var rows []row
	for i, d := range data {
		var train []*fitData
		train = append(train, data[:i]...)
		train = append(train, data[i+1:]...)
		w, err := fitGroups(train, prior)
		if err != nil {
			return err
		}
		r := row{name: d.name, n: d.n, cpuNS: d.cpuNS, pprofSamples: d.samples, dropped: d.dropped, halves: d.halves}
		r.instrFlat = overlap.Functions(d.instr, d.merged)
		p, total := synthesize(d, w)
		r.costFlat = overlap.Functions(p, d.merged)
		r.costNS = total / 1000
		rows = append(rows, r)
		logf("%s (left out): flat overlap instructions %.1f%%, cost %.1f%%; cost %.0f ms, CPU %.0f ms", d.name, r.instrFlat, r.costFlat, r.costNS/1e6, r.cpuNS/1e6)
	}
	all, err := fitGroups(data, prior)
	if err != nil {
		return err
	}
	t := tableOf(all, data)
	var b strings.Builder
	fmt.Fprintf(&b, "Leave-one-out: each workload's cost profile uses the group weights fitted on the other %d workloads (per-function counts of each group from exact profiles of base and group tables, against merged pprof CPU profiles: %d runs at %d Hz, -n a %.2g fraction of the default).\n\n", len(data)-1, cfg.runs, cfg.hz, cfg.size)
	report(&b, cfg, rows)
	fmt.Fprintf(&b, "\nWeights fitted on all %d workloads (ps per instruction of the group; bytes: ps per byte of a constant-size allocation):\n\n", len(data))
	for _, g := range groups {
		fmt.Fprintf(&b, "- %s: %d (%s)\n", g.name, t.Class(g.classes[0]), strings.Join(g.classes, ", "))
	}
	os.Stdout.WriteString(b.String())
	if cfg.out != "" {
		if err := os.WriteFile(cfg.out, []byte(b.String()), 0o666); err != nil {
			return err
		}
	}
	if cfg.writeTable != "" {
		head := fmt.Sprintf("# kprof's cost table for linux/amd64, picoseconds per go/ssa instruction:\n# fitted on bench/workloads (%s) by\n# go run ./bench/costval %s\n# one weight per group of classes (bench/costval/fit.go).\n", strings.Join(cfg.workloads, ", "), cfg.args)
		return os.WriteFile(cfg.writeTable, append([]byte(head), t.Format()...), 0o666)
	}
	return nil
}

func groupNames() []string {
	var n []string
	for _, g := range groups {
		n = append(n, g.name)
	}
	return n
}

func fitWorkload(ctx context.Context, cfg *config, root, kprof string, filter *pprofconv.Filter, tables map[string]string, name string) (*fitData, error) {
	d := &fitData{name: name, counts: map[string]map[string]float64{}, funcs: map[string]profile.Func{}}
	args, err := sizeArgs(root, cfg, name)
	if err != nil {
		return nil, err
	}
	d.n, _ = strconv.Atoi(args[1])
	pkg := "./bench/workloads/" + name
	plain := filepath.Join(cfg.work, name+".plain")
	if err := do(ctx, root, "go", "build", "-o", plain, pkg); err != nil {
		return nil, err
	}
	want, _, err := runBin(ctx, plain, nil, args...)
	if err != nil {
		return nil, err
	}
	ref, err := cpuProfiles(ctx, cfg, plain, want, filter, name, args)
	if err != nil {
		return nil, err
	}
	d.merged, d.cpuNS, d.samples, d.dropped, d.halves = ref.merged, ref.cpuNS, ref.st.Samples, ref.st.Dropped, ref.halves
	d.pprof = map[string]float64{}
	period := float64(d.merged.Meta.Granularity) // ns per sample, as the profiles say
	for _, s := range d.merged.Flat() {
		k := key(s.Func)
		d.funcs[k] = s.Func
		v := float64(s.Self) * period / float64(cfg.runs)
		d.pprof[k] = v
		d.total += v
	}
	exact := func(label string, flags ...string) (map[string]float64, *profile.Profile, error) {
		bin := filepath.Join(cfg.work, name+"."+label)
		if err := do(ctx, root, kprof, append(append([]string{"build", "-o", bin}, flags...), pkg)...); err != nil {
			return nil, nil, err
		}
		path := bin + ".kprof"
		out, _, err := runBin(ctx, bin, []string{"KPROF_MODE=exact", "KPROF_OUT=" + path}, args...)
		if err != nil {
			return nil, nil, err
		}
		if out != want {
			return nil, nil, fmt.Errorf("%s printed %q, want %q", label, out, want)
		}
		p, err := profile.ParseFile(path)
		if err != nil {
			return nil, nil, err
		}
		flat := map[string]float64{}
		for _, s := range p.Flat() {
			flat[key(s.Func)] = float64(s.Self)
			d.funcs[key(s.Func)] = s.Func
		}
		return flat, p, nil
	}
	if _, d.instr, err = exact("instr"); err != nil {
		return nil, err
	}
	base, _, err := exact("base", "-metric", "cost", "-costtable", tables[""])
	if err != nil {
		return nil, err
	}
	for _, g := range groupNames() {
		flat, _, err := exact(g, "-metric", "cost", "-costtable", tables[g])
		if err != nil {
			return nil, err
		}
		c := map[string]float64{}
		for k, v := range flat {
			if n := v - base[k]; n != 0 {
				c[k] = n
			}
		}
		d.counts[g] = c
	}
	return d, nil
}

// key identifies a function as overlap's measures do: by name (a pprof
// profile names files by absolute path, kprof by package).
func key(f profile.Func) string { return f.Name }

// priorWeight is the pull of each group's row towards the prior table
// (relative error), against the workloads' rows.
const priorWeight = 0.05

// fitGroups fits one weight per group, ns per instruction, on data,
// pulled towards the prior table: for each group the mean weight of its
// classes there.
func fitGroups(data []*fitData, prior *cost.Table) ([]float64, error) {
	type fk struct {
		d *fitData
		k string
	}
	var rowsK []fk
	for _, d := range data {
		for k := range d.funcs {
			rowsK = append(rowsK, fk{d, k})
		}
	}
	sort.Slice(rowsK, func(i, j int) bool {
		if rowsK[i].d.name != rowsK[j].d.name {
			return rowsK[i].d.name < rowsK[j].d.name
		}
		return rowsK[i].k < rowsK[j].k
	})
	names := groupNames()
	nr := len(rowsK)
	a := mat.NewDense(nr+len(names), len(names), nil)
	b := mat.NewVecDense(nr+len(names), nil)
	for i, r := range rowsK {
		for j, g := range names {
			a.Set(i, j, r.d.counts[g][r.k]/r.d.total)
		}
		b.SetVec(i, r.d.pprof[r.k]/r.d.total)
	}
	for j, g := range groups {
		var sum float64
		for _, c := range g.classes {
			sum += float64(prior.Class(c))
		}
		p := sum / float64(len(g.classes)) / 1000 // ns
		a.Set(nr+j, j, priorWeight/p)
		b.SetVec(nr+j, priorWeight)
	}
	w, err := calibrate.NNLS(a, b)
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(names))
	for j := range names {
		out[j] = w.AtVec(j)
	}
	return out, nil
}

// synthesize returns d's flat cost profile (ps) under group weights w (ns
// per instruction) and its total.
func synthesize(d *fitData, w []float64) (*profile.Profile, float64) {
	p := &profile.Profile{Meta: profile.Meta{Mode: profile.ModeExact, Program: d.name, Metric: cost.Metric}, Root: &profile.Node{}}
	var total float64
	keys := make([]string, 0, len(d.funcs))
	for k := range d.funcs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		var v float64
		for j, g := range groupNames() {
			v += w[j] * 1000 * d.counts[g][k]
		}
		if v <= 0 {
			continue
		}
		p.Root.Child(d.funcs[k]).Instructions = int64(math.Round(v))
		total += v
	}
	p.TotalInstructions = int64(math.Round(total))
	return p, total
}

// tableOf turns group weights (ns) into a table: ps, at least 1; its scale
// is the mean weight of an instruction over data.
func tableOf(w []float64, data []*fitData) *cost.Table {
	t := &cost.Table{Name: "linux-amd64", Weights: map[string]int64{}}
	var ps, n float64
	for j, g := range groups {
		wt := max(1, int64(math.Round(w[j]*1000)))
		for _, c := range g.classes {
			t.Weights[c] = wt
		}
		if g.name == "bytes" {
			continue
		}
		for _, d := range data {
			for _, v := range d.counts[g.name] {
				ps += float64(wt) * v
				n += v
			}
		}
	}
	t.Scale = max(1, int64(math.Round(ps/n)))
	return t
}

var _ io.Writer = (*strings.Builder)(nil)
