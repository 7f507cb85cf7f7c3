package gate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/kprof/kprof/reports"
)

// The gate's renderings: a text table for terminals and CI logs, JSON for
// scripts, Markdown for a pull-request comment. All three say the same
// things: one row per benchmark (old, new, delta, verdict), the calling
// contexts behind each regression, warnings and a verdict line.

// Summary returns the gate's verdict in one line, as the text and
// Markdown renderings end: "gate passed: …", "gate FAILED: …" or
// "gate ERROR: …".
func (r *Result) Summary() string {
	var regressed, errs []string
	for _, row := range r.Rows {
		switch {
		case len(row.Problems) > 0:
			errs = append(errs, row.Name+" "+row.Problems[0])
		case row.Status == Regression:
			regressed = append(regressed, row.Name+" "+strings.Join(row.Reasons, ", "))
		}
	}
	n := len(r.Rows)
	regressed, errs = firstFew(regressed), firstFew(errs)
	switch r.Verdict() {
	case Err:
		s := fmt.Sprintf("gate ERROR: %d of %d benchmarks could not be checked: %s", r.Errors, n, strings.Join(errs, "; "))
		if r.Regressions > 0 {
			s += fmt.Sprintf("; %d regressed: %s", r.Regressions, strings.Join(regressed, "; "))
		}
		if r.missing {
			s += "; allow_missing in the configuration or --allow-missing accepts benchmarks on one side only"
		}
		return s
	case Fail:
		return fmt.Sprintf("gate FAILED: %d of %d benchmarks regressed: %s", r.Regressions, n, strings.Join(regressed, "; "))
	}
	s := fmt.Sprintf("gate passed: %d %s within limits", n, plural(n, "benchmark", "benchmarks"))
	if r.Improvements > 0 {
		s += fmt.Sprintf(", %d improved", r.Improvements)
	}
	return s
}

// firstFew keeps a summary line readable: the first three items, then
// how many more there are.
func firstFew(items []string) []string {
	const few = 3
	if len(items) <= few+1 {
		return items
	}
	return append(items[:few:few], fmt.Sprintf("and %d more", len(items)-few))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// verdictText is the last column of a row.
func (row *Row) verdictText(r *Result) string {
	var parts []string
	switch row.Status {
	case Regression:
		parts = append(parts, "REGRESSION: "+strings.Join(row.Reasons, ", "))
	case Improved:
		parts = append(parts, "improved")
	case Worse:
		parts = append(parts, "within "+row.Threshold.String())
	case Added:
		parts = append(parts, "added: only in "+r.New)
	case Removed:
		parts = append(parts, "removed: only in "+r.Old)
	}
	for _, p := range row.Problems {
		parts = append(parts, "ERROR: "+p)
	}
	return strings.Join(parts, "; ")
}

func optValue(v *float64) string {
	if v == nil {
		return "-"
	}
	return formatValue(*v)
}

func (row *Row) deltaText() string {
	switch {
	case row.Old == nil || row.New == nil:
		return "-"
	case row.Delta == nil && *row.New == *row.Old:
		return "0.00%"
	case row.Delta == nil:
		return "+Inf%" // from 0 to more
	}
	return formatDelta(row.Delta)
}

func (c Context) deltaText() string {
	if c.Delta > 0 {
		return "+" + formatValue(c.Delta)
	}
	return formatValue(c.Delta)
}

// WriteText writes the gate as a table, benchstat-like: a header with
// the unit and both inputs, then per package its benchmarks with old and
// new value, the change and the verdict, then the calling contexts behind
// each regression, any warnings, and the Summary line.
func (r *Result) WriteText(w io.Writer) error {
	ew := &reports.ErrWriter{W: w}
	exact := ""
	if r.Exact {
		exact = " (exact)"
	}
	ew.Printf("unit: %s%s  threshold: %s unless configured\n", r.Unit, exact, r.Threshold)
	var table bytes.Buffer
	tw := tabwriter.NewWriter(&table, 0, 0, 2, ' ', 0)
	pkg := "\x00"
	for _, row := range r.Rows {
		if row.Package != pkg {
			pkg = row.Package
			if pkg != "" {
				fmt.Fprintf(tw, "pkg: %s\n", pkg)
			}
			fmt.Fprintf(tw, "benchmark\t%s\t%s\tdelta\t\n", r.Old, r.New)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", row.Name, optValue(row.Old), optValue(row.New), row.deltaText(), row.verdictText(r))
	}
	tw.Flush()
	for line := range strings.Lines(table.String()) {
		ew.Printf("%s\n", strings.TrimRight(line, " \n"))
	}
	for _, row := range r.Rows {
		if len(row.Contexts) == 0 && len(row.Notes) == 0 {
			continue
		}
		ew.Printf("\n%s:", row.Name)
		for _, n := range row.Notes {
			ew.Printf(" %s", n)
		}
		ew.Printf("\n")
		if len(row.Contexts) == 0 {
			continue
		}
		ew.Printf("calling contexts whose instructions/op changed most:\n")
		tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "old\tnew\tdelta\t  calling context\n")
		for _, c := range row.Contexts {
			fmt.Fprintf(tw, "%s\t%s\t%s\t  %s\n", formatValue(c.Old), formatValue(c.New), c.deltaText(), reports.StackString(c.Stack))
		}
		tw.Flush()
	}
	if len(r.Warnings) > 0 {
		ew.Printf("\n")
	}
	for _, s := range r.Warnings {
		ew.Printf("warning: %s\n", s)
	}
	ew.Printf("\n%s\n", r.Summary())
	return ew.Err
}

// WriteMarkdown writes the gate as GitHub-flavoured Markdown for a
// pull-request comment: a heading with the verdict, a table per package,
// the calling contexts behind each regression in a collapsed section, and
// the warnings.
func (r *Result) WriteMarkdown(w io.Writer) error {
	ew := &reports.ErrWriter{W: w}
	switch r.Verdict() {
	case Pass:
		ew.Printf("### kprof gate: passed\n\n")
	case Fail:
		ew.Printf("### kprof gate: %d %s\n\n", r.Regressions, plural(r.Regressions, "regression", "regressions"))
	default:
		ew.Printf("### kprof gate: %d %s\n\n", r.Errors, plural(r.Errors, "error", "errors"))
	}
	exact := ""
	if r.Exact {
		exact = " (exact)"
	}
	ew.Printf("%s\n\nUnit: %s%s, threshold %s unless configured; old: %s, new: %s.\n",
		mdEscape(r.Summary()), mdCode(r.Unit), exact, r.Threshold, mdCode(r.Old), mdCode(r.New))
	pkg := "\x00"
	for _, row := range r.Rows {
		if row.Package != pkg {
			pkg = row.Package
			ew.Printf("\n")
			if pkg != "" {
				ew.Printf("%s\n\n", mdCode(pkg))
			}
			ew.Printf("| benchmark | old | new | delta | |\n|---|--:|--:|--:|---|\n")
		}
		verdict := row.verdictText(r)
		if row.Status == Regression || len(row.Problems) > 0 {
			verdict = "**" + mdEscape(verdict) + "**"
		} else {
			verdict = mdEscape(verdict)
		}
		ew.Printf("| %s | %s | %s | %s | %s |\n", mdCode(row.Name), optValue(row.Old), optValue(row.New), row.deltaText(), verdict)
	}
	for _, row := range r.Rows {
		if len(row.Contexts) == 0 && len(row.Notes) == 0 {
			continue
		}
		ew.Printf("\n<details><summary>%s: where the instructions changed</summary>\n\n", htmlEscape(row.Name))
		for _, n := range row.Notes {
			ew.Printf("%s\n\n", mdEscape(n))
		}
		if len(row.Contexts) > 0 {
			ew.Printf("| old | new | delta | calling context |\n|--:|--:|--:|---|\n")
			for _, c := range row.Contexts {
				ew.Printf("| %s | %s | %s | %s |\n", formatValue(c.Old), formatValue(c.New), c.deltaText(), mdCode(reports.StackString(c.Stack)))
			}
		}
		ew.Printf("\n</details>\n")
	}
	if len(r.Warnings) > 0 {
		ew.Printf("\n")
	}
	for _, s := range r.Warnings {
		ew.Printf("- warning: %s\n", mdEscape(s))
	}
	return ew.Err
}

// mdCode writes s as inline code; a "|" would end a table cell even
// there.
func mdCode(s string) string {
	return "`" + strings.ReplaceAll(strings.ReplaceAll(s, "`", "'"), "|", `\|`) + "`"
}

var mdEscaper = strings.NewReplacer(`\`, `\\`, "|", `\|`, "*", `\*`, "_", `\_`, "`", "\\`", "<", "&lt;", ">", "&gt;", "[", `\[`, "]", `\]`)

func mdEscape(s string) string { return mdEscaper.Replace(s) }

var htmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

func htmlEscape(s string) string { return htmlEscaper.Replace(s) }

// gateJSON is Result as JSON: each context's stack is a list of
// frames, and the verdict is spelled out.
type gateJSON struct {
	Verdict string `json:"verdict"` // "pass", "fail" or "error"
	Summary string `json:"summary"`
	*Result
	Rows []gateRowJSON `json:"benchmarks"`
}

type gateRowJSON struct {
	Row
	Contexts []gateContextJSON `json:"contexts,omitempty"`
}

type gateContextJSON struct {
	Stack []reports.Frame `json:"stack"` // outermost first
	Context
}

// WriteJSON writes the gate as one JSON object: the verdict ("pass",
// "fail", "error"), the Summary line, the unit, both inputs, the default
// threshold, one object per benchmark (old, new, delta_percent, status,
// the limits that applied, reasons, problems, notes, contexts) and the
// warnings.
func (r *Result) WriteJSON(w io.Writer) error {
	j := gateJSON{
		Verdict: [...]string{Pass: "pass", Fail: "fail", Err: "error"}[r.Verdict()],
		Summary: r.Summary(),
		Result:  r,
		Rows:    []gateRowJSON{},
	}
	for _, row := range r.Rows {
		jr := gateRowJSON{Row: row}
		for _, c := range row.Contexts {
			jc := gateContextJSON{Stack: []reports.Frame{}, Context: c}
			for _, f := range c.Stack {
				jc.Stack = append(jc.Stack, reports.Frame{Name: f.Name, File: f.File, Line: f.Line})
			}
			jr.Contexts = append(jr.Contexts, jc)
		}
		j.Rows = append(j.Rows, jr)
	}
	b, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
