package reports

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode"

	"github.com/kprof/kprof/overlap"
	"github.com/kprof/kprof/profile"
)

// TopOptions configures [Top].
type TopOptions struct {
	// NodeCount is the number of functions listed; 0 or less lists all.
	NodeCount int
}

// Top writes p's flat profile: per function, the instructions of the
// contexts that end in it (flat) and of those that contain it (cum), with
// their shares, the running sum of the flat shares and the samples taken in
// the function. Functions are listed by flat instructions, largest first,
// ties by name; at most opts.NodeCount of them, with a line saying how many
// were left out.
func Top(w io.Writer, p *profile.Profile, opts TopOptions) error {
	p, err := prepare(p)
	if err != nil {
		return fmt.Errorf("top: %w", err)
	}
	ew := &ErrWriter{W: w}
	sum := p.SumInstructions()
	writeHeader(ew, p, sum)

	samples := map[profile.Func]int64{}
	p.Walk(func(_ []profile.Func, n *profile.Node) { samples[n.Func] += n.Samples })
	names := newNamer(p)
	type row struct {
		stat profile.FuncStat
		name string
	}
	var rows []row
	for _, s := range p.Flat() {
		rows = append(rows, row{s, names.name(s.Func)})
	}
	slices.SortStableFunc(rows, func(a, b row) int { // stable: Flat is in canonical order
		if c := cmp.Compare(b.stat.Self, a.stat.Self); c != 0 {
			return c
		}
		return cmp.Compare(a.name, b.name)
	})
	if len(rows) == 0 {
		ew.Printf("no calling contexts\n")
		return ew.Err
	}
	shown := rows
	if opts.NodeCount > 0 && opts.NodeCount < len(rows) {
		shown = rows[:opts.NodeCount]
	}

	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
	u := columnUnit(&p.Meta)
	fmt.Fprintf(tw, "flat%s\tflat%%\tsum%%\tcum%s\tcum%%\tsamples\t  function\n", u, u)
	var running int64
	for _, r := range shown {
		running += r.stat.Self
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%s\t%d\t  %s\n",
			r.stat.Self, percent(r.stat.Self, sum), percent(running, sum),
			r.stat.Cum, percent(r.stat.Cum, sum), samples[r.stat.Func], r.name)
	}
	tw.Flush()
	if len(shown) < len(rows) {
		ew.Printf("showing %d of %d functions, %s of %s\n", len(shown), len(rows), percent(running, sum), p.Meta.MetricName())
	}
	return ew.Err
}

// TreeOptions configures [Tree].
type TreeOptions struct {
	// Cutoff hides the calling contexts whose cumulative instructions are
	// less than this percentage (0 to 100) of the contexts' sum, with the
	// contexts they call. 0 shows every context.
	Cutoff float64
}

// maxIndent is the deepest level Tree indents; deeper contexts are shown
// at that indentation with their depth in brackets, so a deep recursion
// does not push names off the screen.
const maxIndent = 32

// Tree writes p's calling-context tree, one context per line, indented by
// depth: cumulative and self instructions with their shares, samples and
// (when the profile counts them) calls. A node's callees follow it, largest
// cumulative instructions first, ties in canonical order. Contexts below
// opts.Cutoff are hidden, and a last line says how many.
func Tree(w io.Writer, p *profile.Profile, opts TreeOptions) error {
	if math.IsNaN(opts.Cutoff) || opts.Cutoff < 0 || opts.Cutoff > 100 {
		return fmt.Errorf("tree: cut-off %v%% is not a percentage between 0 and 100", opts.Cutoff)
	}
	p, err := prepare(p)
	if err != nil {
		return fmt.Errorf("tree: %w", err)
	}
	ew := &ErrWriter{W: w}
	sum := p.SumInstructions()
	writeHeader(ew, p, sum)
	t := flatten(p)
	if len(t.node) == 1 {
		ew.Printf("no calling contexts\n")
		return ew.Err
	}
	names := newNamer(p)
	calls := p.Meta.Mode == profile.ModeExact
	for _, n := range t.node {
		calls = calls || n.Calls != 0
	}
	hidden := func(i int) bool { return float64(t.cum[i])*100 < opts.Cutoff*float64(sum) }

	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
	u := columnUnit(&p.Meta)
	fmt.Fprintf(tw, "cum%s\tcum%%\tself%s\tself%%\tsamples\t", u, u)
	if calls {
		fmt.Fprintf(tw, "calls\t")
	}
	fmt.Fprintf(tw, "  calling context\n")
	var hiddenContexts int
	var hiddenInstructions int64
	stack := byCum(t, t.children[0])
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if hidden(i) {
			hiddenContexts += t.size(i)
			hiddenInstructions += t.cum[i]
			continue
		}
		n := t.node[i]
		fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%d\t", t.cum[i], percent(t.cum[i], sum), n.Instructions, percent(n.Instructions, sum), n.Samples)
		if calls {
			fmt.Fprintf(tw, "%d\t", n.Calls)
		}
		d := t.depth[i] - 1
		indent := strings.Repeat("  ", min(d, maxIndent))
		if d > maxIndent {
			indent += fmt.Sprintf("[%d] ", d)
		}
		fmt.Fprintf(tw, "  %s%s\n", indent, names.name(n.Func))
		stack = append(stack, byCum(t, t.children[i])...)
	}
	tw.Flush()
	if hiddenContexts > 0 {
		ew.Printf("%d calling contexts below the %v%% cut-off hidden (%d %s, %s)\n",
			hiddenContexts, opts.Cutoff, hiddenInstructions, unitName(&p.Meta), percent(hiddenInstructions, sum))
	}
	return ew.Err
}

// byCum returns the nodes kids ordered for a stack: the one to show first
// (most cumulative instructions, ties in canonical order, which for
// siblings is index order) last.
func byCum(t *cct, kids []int) []int {
	s := slices.Clone(kids)
	slices.SortFunc(s, func(i, j int) int {
		if c := cmp.Compare(t.cum[j], t.cum[i]); c != 0 {
			return c
		}
		return cmp.Compare(i, j)
	})
	slices.Reverse(s)
	return s
}

// writeHeader writes the profile's description: program, agent mode,
// granularity and totals, and how the contexts' instructions relate to the
// total when they differ.
func writeHeader(w *ErrWriter, p *profile.Profile, sum int64) {
	m := &p.Meta
	program := m.Program
	if program == "" {
		program = "(unknown)"
	}
	mode := m.Mode
	if mode == "" {
		mode = "(unknown)"
	}
	gran := "none"
	if m.Granularity > 0 {
		gran = fmt.Sprint(m.Granularity)
		if m.Jitter > 0 {
			gran += fmt.Sprintf(" (jitter %d)", m.Jitter)
		}
	}
	metric := "instructions"
	if m.Metric != "" {
		// A weighted metric: its counts are in picoseconds.
		metric = m.Metric + " (ps)"
		if m.MetricTable != "" {
			metric = m.Metric + " (ps, table " + m.MetricTable + ")"
		}
	}
	w.Printf("program: %s  mode: %s  granularity: %s  %s: %d  samples: %d\n",
		program, mode, gran, metric, p.TotalInstructions, p.TotalSamples)
	if len(m.Labels) > 0 {
		w.Printf("labels:")
		for _, l := range m.Labels {
			w.Printf(" %s=%s", l.Key, quoteIfNeeded(l.Value))
		}
		w.Printf("\n")
	}
	if sum != p.TotalInstructions {
		estimated := ""
		if m.Mode == profile.ModeSample {
			estimated = " an estimated"
		}
		w.Printf("calling contexts hold%s %d %s (%s of the total, δb %s); percentages are of their sum\n",
			estimated, sum, unitName(m), percent(sum, p.TotalInstructions), formatDeltaB(overlap.DeltaB(sum, p.TotalInstructions)))
	}
	if o := p.Overflowed(); o > 0 {
		w.Printf("note: %s of the %s are below %s: their goroutines ran out of calling contexts, and those contexts keep only the innermost function (raise KPROF_MAX_CONTEXTS for all)\n",
			percent(o, sum), unitName(m), profile.OverflowName)
	}
}

// quoteIfNeeded returns s, quoted if it is empty or holds a space or a
// character that is not printable, so that a header's labels stay one
// line and each stays one word.
func quoteIfNeeded(s string) string {
	if s == "" || strings.IndexFunc(s, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) || r == '"' }) >= 0 {
		return strconv.Quote(s)
	}
	return s
}

// unitName names what m's counts count: "instructions", or "ps" of a
// weighted metric (package cost).
func unitName(m *profile.Meta) string {
	if m.Metric != "" {
		return "ps"
	}
	return "instructions"
}

// columnUnit is what the columns of counts add to their names: nothing
// for instructions, "(ps)" for a weighted metric.
func columnUnit(m *profile.Meta) string {
	if m.Metric != "" {
		return "(ps)"
	}
	return ""
}

// percent formats x as a percentage of total with two decimals. A share
// that is not all of total never prints as 100.00%, nor a non-zero one as
// 0.00%: rounding must not claim an identity.
func percent(x, total int64) string {
	if total == 0 {
		return "0.00%"
	}
	return formatPercent(100 * float64(x) / float64(total))
}

func formatPercent(v float64) string {
	s := fmt.Sprintf("%.2f%%", v)
	switch {
	case s == "100.00%" && v < 100:
		return "99.99%"
	case s == "0.00%" && v > 0:
		return "0.01%"
	}
	return s
}

// formatDeltaB formats a relative error: 0, or signed with three
// significant digits.
func formatDeltaB(d float64) string {
	switch {
	case d == 0:
		return "0"
	case math.IsInf(d, 1):
		return "+Inf"
	}
	return fmt.Sprintf("%+.3g", d)
}

// errWriter keeps the first write error, so a report is written with plain
// calls and checked once.
// ErrWriter writes to W until a write fails, and keeps the first error:
// a rendering writes everything, then reports Err once.
type ErrWriter struct {
	W   io.Writer
	Err error
}

func (e *ErrWriter) Write(b []byte) (int, error) {
	if e.Err != nil {
		return 0, e.Err
	}
	n, err := e.W.Write(b)
	e.Err = err
	return n, err
}

// Printf formats to the writer.
func (e *ErrWriter) Printf(format string, args ...any) {
	fmt.Fprintf(e, format, args...)
}
