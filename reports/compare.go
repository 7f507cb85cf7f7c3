package reports

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/kprof/kprof/overlap"
	"github.com/kprof/kprof/profile"
)

// DefaultCompareTop is the number of differing contexts Compare lists when
// CompareOptions.Top is 0.
const DefaultCompareTop = 10

// CompareOptions configures [Compare].
type CompareOptions struct {
	// Top is the number of calling contexts listed whose shares differ
	// most: 0 means DefaultCompareTop, a negative number none.
	Top int
	// JSON writes the Result as one JSON object instead of text.
	JSON bool
	// NameA and NameB label the profiles in the output (typically their
	// file names); empty means "A" and "B".
	NameA, NameB string
}

// Side describes one of the two profiles compared.
type Side struct {
	Name    string `json:"name"`
	Program string `json:"program"`
	Mode    string `json:"mode"`
	// TotalInstructions is the profile's exact instruction count, and
	// ContextInstructions the sum over its calling contexts (estimated in
	// sample mode).
	TotalInstructions   int64 `json:"total_instructions"`
	ContextInstructions int64 `json:"context_instructions"`
	TotalSamples        int64 `json:"total_samples"`
	// Size is the number of calling contexts (paper §7.3).
	Size int `json:"size"`
}

// Result is what Compare measured.
type Result struct {
	// Overlap is the overlap percentage on calling contexts (paper §7.1,
	// [overlap.Contexts]), FunctionOverlap on flat functions
	// ([overlap.Functions]).
	Overlap         float64 `json:"overlap"`
	FunctionOverlap float64 `json:"function_overlap"`
	// Identical is true when the profiles have the same calling contexts
	// with the same counts (samples, instructions, calls) and the same
	// totals; metadata such as GOARCH may differ.
	Identical bool `json:"identical"`
	A         Side `json:"a"`
	B         Side `json:"b"`
	// Exact names the side whose TotalInstructions δb takes as exact:
	// "a" or "b" (see Compare).
	Exact string `json:"exact"`
	// DeltaB is δb of paper §7.2 ([overlap.DeltaB]) of the other side's
	// TotalInstructions against the exact side's; +Inf when the exact
	// side counted nothing and the other did (null in JSON).
	DeltaB float64 `json:"-"`
	// Diffs are the calling contexts whose shares differ most
	// ([overlap.Diff]).
	Diffs []overlap.ContextDiff `json:"-"`
	// Warnings are things the reader should know, such as profiles of
	// different programs. Compare writes them into its output too.
	Warnings []string `json:"warnings"`
}

// Compare compares profiles a and b and writes the comparison to w. The
// first line of the text output is always "overlap: NN.NN%", the overlap
// percentage on calling contexts, so scripts can read it with head -1; then
// follow the overlap on flat functions, a line saying so when the profiles
// are identical, any warnings, a table of both profiles' totals and sizes,
// δb between their instruction totals, and the calling contexts whose shares
// differ most, with both shares.
//
// δb needs an exact side: if exactly one profile's Meta.Mode is "exact", it
// is that one; otherwise b is taken as exact (compare a new profile against
// a reference: kprof compare new.kprof reference.kprof).
//
// Profiles measured with different metrics ([profile.SameMetric]) count
// different things and are refused with an error; profiles of different programs (Meta.Program) are compared with a
// warning.
func Compare(w io.Writer, a, b *profile.Profile, opts CompareOptions) (Result, error) {
	var r Result
	var err error
	if a, err = prepare(a); err != nil {
		return r, fmt.Errorf("compare: %s: %w", label(opts.NameA, "A"), err)
	}
	if b, err = prepare(b); err != nil {
		return r, fmt.Errorf("compare: %s: %w", label(opts.NameB, "B"), err)
	}
	nameA, nameB := label(opts.NameA, "A"), label(opts.NameB, "B")
	if err := profile.SameMetric(&a.Meta, &b.Meta); err != nil {
		return r, fmt.Errorf("cannot compare %s with %s: %w; profile both with the same kprof and -metric", nameA, nameB, err)
	}

	r.Overlap = overlap.Contexts(a, b)
	r.FunctionOverlap = overlap.Functions(a, b)
	r.Identical = overlap.Identical(a, b)
	r.A, r.B = side(nameA, a), side(nameB, b)
	exact, approx := r.B, r.A
	r.Exact = "b"
	if a.Meta.Mode == profile.ModeExact && b.Meta.Mode != profile.ModeExact {
		exact, approx = r.A, r.B
		r.Exact = "a"
	}
	r.DeltaB = overlap.DeltaB(approx.TotalInstructions, exact.TotalInstructions)
	top := opts.Top
	if top == 0 {
		top = DefaultCompareTop
	}
	if top > 0 {
		r.Diffs = overlap.Diff(a, b, top)
	}

	if pa, pb := a.Meta.Program, b.Meta.Program; pa != pb {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%s is a profile of %q, %s of %q", nameA, pa, nameB, pb))
	}
	for _, s := range []Side{r.A, r.B} {
		if s.ContextInstructions == 0 {
			r.Warnings = append(r.Warnings, fmt.Sprintf("%s has no instructions in calling contexts", s.Name))
		}
	}

	if opts.JSON {
		err = writeJSON(w, &r)
	} else {
		err = writeComparison(w, &r, approx.Name, exact.Name)
	}
	return r, err
}

func label(name, fallback string) string {
	if name == "" {
		return fallback
	}
	return name
}

func side(name string, p *profile.Profile) Side {
	return Side{
		Name:                name,
		Program:             p.Meta.Program,
		Mode:                p.Meta.Mode,
		TotalInstructions:   p.TotalInstructions,
		ContextInstructions: p.SumInstructions(),
		TotalSamples:        p.TotalSamples,
		Size:                overlap.Size(p),
	}
}

func writeComparison(w io.Writer, r *Result, approx, exact string) error {
	ew := &ErrWriter{W: w}
	ew.Printf("overlap: %s\n", formatPercent(r.Overlap))
	ew.Printf("function overlap: %s\n", formatPercent(r.FunctionOverlap))
	if r.Identical {
		ew.Printf("the profiles are identical: same calling contexts, counts and totals\n")
	}
	for _, s := range r.Warnings {
		ew.Printf("warning: %s\n", s)
	}
	ew.Printf("\n")
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "\t%s\t%s\n", r.A.Name, r.B.Name)
	fmt.Fprintf(tw, "program\t%s\t%s\n", orUnknown(r.A.Program), orUnknown(r.B.Program))
	fmt.Fprintf(tw, "mode\t%s\t%s\n", orUnknown(r.A.Mode), orUnknown(r.B.Mode))
	fmt.Fprintf(tw, "instructions\t%d\t%d\n", r.A.TotalInstructions, r.B.TotalInstructions)
	fmt.Fprintf(tw, "in calling contexts\t%d\t%d\n", r.A.ContextInstructions, r.B.ContextInstructions)
	fmt.Fprintf(tw, "samples\t%d\t%d\n", r.A.TotalSamples, r.B.TotalSamples)
	fmt.Fprintf(tw, "calling contexts\t%d\t%d\n", r.A.Size, r.B.Size)
	tw.Flush()
	ew.Printf("δb: %s (%s's instructions against %s's, taken as exact)\n", formatDeltaB(r.DeltaB), approx, exact)

	switch {
	case r.Identical:
	case len(r.Diffs) == 0 && r.Overlap == 100:
		ew.Printf("\nno calling context's share differs\n")
	case len(r.Diffs) > 0:
		ew.Printf("\ncalling contexts whose shares differ most:\n")
		tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "%s\t%s\tdifference\t  calling context\n", r.A.Name, r.B.Name)
		for _, d := range r.Diffs {
			fmt.Fprintf(tw, "%s\t%s\t%+.2f\t  %s\n", formatPercent(d.A), formatPercent(d.B), d.B-d.A, StackString(d.Stack))
		}
		tw.Flush()
	}
	return ew.Err
}

// StackString shows a calling context outermost function first. A stack
// deeper than a screen keeps its outermost and innermost frames.
func StackString(stack []profile.Func) string {
	const head, tail = 4, 6
	names := make([]string, 0, len(stack))
	for i, f := range stack {
		if len(stack) > head+tail+1 && i == head {
			names = append(names, fmt.Sprintf("… %d more …", len(stack)-head-tail))
		}
		if len(stack) > head+tail+1 && i >= head && i < len(stack)-tail {
			continue
		}
		names = append(names, f.Name)
	}
	return strings.Join(names, " > ")
}

// jsonResult is Result as JSON: δb is null when it is infinite, and each
// differing context's stack is a list of functions.
type jsonResult struct {
	*Result
	DeltaB   *float64   `json:"delta_b"`
	Diffs    []jsonDiff `json:"diffs"`
	Warnings []string   `json:"warnings"`
}

type jsonDiff struct {
	Stack []Frame `json:"stack"` // outermost first
	A     float64 `json:"a"`     // share in a, percent
	B     float64 `json:"b"`
}

// Frame is one function of a calling context in JSON output.
type Frame struct {
	Name string `json:"name"`
	File string `json:"file"`
	Line int    `json:"line"`
}

func writeJSON(w io.Writer, r *Result) error {
	j := jsonResult{Result: r, Diffs: []jsonDiff{}, Warnings: append([]string{}, r.Warnings...)}
	if !math.IsInf(r.DeltaB, 0) && !math.IsNaN(r.DeltaB) {
		j.DeltaB = &r.DeltaB
	}
	for _, d := range r.Diffs {
		jd := jsonDiff{A: d.A, B: d.B}
		for _, f := range d.Stack {
			jd.Stack = append(jd.Stack, Frame{Name: f.Name, File: f.File, Line: f.Line})
		}
		j.Diffs = append(j.Diffs, jd)
	}
	b, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
