package reports

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/kprof/kprof/profile"
)

//go:embed flamegraph.html
var flameGraphPage string

var flameGraphTemplate = template.Must(template.New("flamegraph").Parse(flameGraphPage))

// flameGraph is what the page's template gets. Data goes into the page's
// script as JSON (html/template escapes it for that context); everything
// else is text.
type flameGraph struct {
	Program     string
	Description string
	Summary     string
	Data        flameData
}

// flameData is the calling-context tree in preorder, in parallel arrays to
// keep the page small: node i calls function F[i] (-1 for the root), has
// self instructions S[i], cumulative instructions C[i] and parent P[i] (-1
// for the root). Function f is named N[f] and declared at L[f] (file:line).
type flameData struct {
	F []int    `json:"F"`
	S []int64  `json:"S"`
	C []int64  `json:"C"`
	P []int    `json:"P"`
	N []string `json:"N"`
	L []string `json:"L"`
}

// HTML writes one self-contained page (inline CSS and JavaScript, nothing
// loaded from the network) with an interactive flame graph of p's
// calling-context tree: the root at the top, each context a rectangle below
// its caller as wide as its cumulative instructions, callees in canonical
// order. Hovering shows a context's full name, declaration file:line and
// share; clicking zooms into it, the Reset button, Esc or the browser's Back
// zoom out (the zoomed node is kept in the URL's fragment, #n=INDEX, INDEX
// being the node's preorder index, so a zoomed view can be reloaded or
// linked); a search box highlights functions. Contexts without instructions are left out. The
// page is deterministic: the same profile gives the same bytes.
func HTML(w io.Writer, p *profile.Profile) error {
	p, err := prepare(p)
	if err != nil {
		return fmt.Errorf("html: %w", err)
	}
	t := flatten(p)
	names := newNamer(p)
	var d flameData
	funcs := map[profile.Func]int{}
	index := make([]int, len(t.node)) // index in d of each node of t kept, -1 if dropped
	for i, n := range t.node {
		index[i] = -1
		if i > 0 && (t.cum[i] == 0 || index[t.parent[i]] < 0) {
			continue // no instructions: zero width, and so are its callees
		}
		index[i] = len(d.F)
		f, parent := -1, -1
		if i > 0 {
			var ok bool
			if f, ok = funcs[n.Func]; !ok {
				f = len(d.N)
				funcs[n.Func] = f
				d.N = append(d.N, names.name(n.Func))
				d.L = append(d.L, location(n.Func))
			}
			parent = index[t.parent[i]]
		}
		d.F = append(d.F, f)
		d.S = append(d.S, n.Instructions)
		d.C = append(d.C, t.cum[i])
		d.P = append(d.P, parent)
	}

	m := &p.Meta
	program := m.Program
	if program == "" {
		program = "(unknown program)"
	}
	var desc []string
	desc = append(desc, "mode "+orUnknown(m.Mode))
	if m.Granularity > 0 {
		desc = append(desc, fmt.Sprintf("granularity %d (jitter %d, seed %d)", m.Granularity, m.Jitter, m.Seed))
	}
	desc = append(desc, fmt.Sprintf("%d instructions", p.TotalInstructions))
	if sum := t.cum[0]; sum != p.TotalInstructions {
		desc = append(desc, fmt.Sprintf("%d in calling contexts", sum))
	}
	desc = append(desc, fmt.Sprintf("%d samples", p.TotalSamples), fmt.Sprintf("%d calling contexts", len(t.node)-1))
	for _, s := range []string{m.GoVersion, strings.Trim(m.GOOS+"/"+m.GOARCH, "/"), describe("kprof %s", m.KprofVersion)} {
		if s != "" {
			desc = append(desc, s)
		}
	}
	page := flameGraph{
		Program:     program,
		Description: strings.Join(desc, " · "),
		Summary:     "Hover over a frame for its function, file:line and share of the instructions.",
		Data:        d,
	}
	if err := flameGraphTemplate.Execute(w, page); err != nil {
		return fmt.Errorf("html: %w", err)
	}
	return nil
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
