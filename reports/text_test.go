package reports

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kprof/kprof/profile"
	"github.com/kprof/kprof/profile/profiletest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// golden compares got with testdata/name.golden, or rewrites the file
// with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (go test -update rewrites it)\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

// demoProfile is a small exact profile: main.main calls work (which
// recurses once and calls leaf) and fmt.Println; runtime.main runs an init.
func demoProfile() *profile.Profile {
	return profiletest.Profile(profile.ModeExact,
		"main.main 100 0 1",
		"main.main;main.work 500 0 3",
		"main.main;main.work;main.leaf 250 0 40",
		"main.main;main.work;main.work 70 0 2",
		"main.main;fmt.Println 30 0 5",
		"main.main;fmt.Println;fmt.Fprintln 30 0 5",
		"runtime.main;main.init 20 0 1",
	)
}

// sampledProfile is a sampled profile whose contexts' estimate differs from
// the exact total, with two functions of the same name in different files.
func sampledProfile() *profile.Profile {
	p := profiletest.Profile(profile.ModeSample,
		"main.main 200 2",
		"main.main;main.work 700 7",
		"main.main;main.work;main.work 100 1",
	)
	p.Root.Child(profiletest.Func("main.main")).Child(profile.Func{Name: "main.work", File: "/src/other/work.go", Line: 7}).Instructions = 300
	p.Root.Child(profiletest.Func("main.main")).Child(profile.Func{Name: "main.work", File: "/src/other/work.go", Line: 7}).Samples = 3
	p.TotalInstructions = 1290
	p.TotalSamples = 13
	return p
}

// labelledProfile is demoProfile with labels, one of them empty and one
// with a space.
func labelledProfile() *profile.Profile {
	p := demoProfile()
	p.Meta.Labels = []profile.Label{{Key: "env", Value: "prod"}, {Key: "note", Value: "two words"}, {Key: "region", Value: ""}, {Key: "version", Value: "v1.2.3"}}
	return p
}

func TestTopTree(t *testing.T) {
	tests := []struct {
		name   string
		render func(*bytes.Buffer) error
	}{
		{"top", func(b *bytes.Buffer) error { return Top(b, demoProfile(), TopOptions{}) }},
		{"top_nodecount", func(b *bytes.Buffer) error { return Top(b, demoProfile(), TopOptions{NodeCount: 2}) }},
		{"top_sampled", func(b *bytes.Buffer) error { return Top(b, sampledProfile(), TopOptions{}) }},
		{"top_empty", func(b *bytes.Buffer) error { return Top(b, profiletest.Profile(profile.ModeExact), TopOptions{}) }},
		{"top_labels", func(b *bytes.Buffer) error { return Top(b, labelledProfile(), TopOptions{NodeCount: 1}) }},
		{"tree", func(b *bytes.Buffer) error { return Tree(b, demoProfile(), TreeOptions{}) }},
		{"tree_cutoff", func(b *bytes.Buffer) error { return Tree(b, demoProfile(), TreeOptions{Cutoff: 10}) }},
		{"tree_sampled", func(b *bytes.Buffer) error { return Tree(b, sampledProfile(), TreeOptions{Cutoff: 1}) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tt.render(&b); err != nil {
				t.Fatal(err)
			}
			golden(t, tt.name, b.Bytes())
		})
	}
}

// TestTopOrder checks the properties the golden files show by example:
// flat descending, ties by name, the flat column sums to 100%.
func TestTopOrder(t *testing.T) {
	p := profiletest.Profile(profile.ModeExact, "m 10", "m;b 30", "m;a 30", "m;c 30")
	var b bytes.Buffer
	if err := Top(&b, p, TopOptions{}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")[2:]
	var names []string
	for _, l := range lines {
		f := strings.Fields(l)
		names = append(names, f[len(f)-1])
	}
	if got, want := strings.Join(names, " "), "a b c m"; got != want {
		t.Errorf("order %q, want %q", got, want)
	}
	if last := strings.Fields(lines[len(lines)-1])[2]; last != "100.00%" {
		t.Errorf("sum%% of the last line = %s, want 100.00%%", last)
	}
}

func TestTreeDeep(t *testing.T) {
	// A recursion deeper than any goroutine stack would allow a recursive
	// renderer: the renderings loop instead.
	p := profiletest.Profile(profile.ModeExact)
	n := p.Root
	const depth = 200000
	for i := range depth {
		n = n.Child(profiletest.Func("main.rec"))
		n.Instructions = 1
		if i == depth-1 {
			n.Instructions = 5
		}
	}
	p.TotalInstructions = depth + 4
	var b bytes.Buffer
	if err := Tree(&b, p, TreeOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "[199999] main.rec\n") {
		t.Errorf("the deepest context is not shown with its depth")
	}
	if err := HTML(&bytes.Buffer{}, p); err != nil {
		t.Fatal(err)
	}
	// A pprof sample lists its whole stack, so Pprof is quadratic in the
	// depth by design: it is not tried here.
}

func TestInvalid(t *testing.T) {
	negative := profiletest.Profile(profile.ModeExact, "a 1")
	negative.Root.Children[0].Instructions = -1
	for _, tt := range []struct {
		name string
		p    *profile.Profile
	}{
		{"nil", nil},
		{"negative", negative},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := Top(&b, tt.p, TopOptions{}); err == nil {
				t.Error("Top: no error")
			}
			if err := Tree(&b, tt.p, TreeOptions{}); err == nil {
				t.Error("Tree: no error")
			}
			if err := HTML(&b, tt.p); err == nil {
				t.Error("HTML: no error")
			}
			if _, err := Pprof(tt.p); err == nil {
				t.Error("Pprof: no error")
			}
			if _, err := Compare(&b, tt.p, demoProfile(), CompareOptions{}); err == nil {
				t.Error("Compare: no error")
			}
		})
	}
	if err := Tree(&bytes.Buffer{}, demoProfile(), TreeOptions{Cutoff: 101}); err == nil {
		t.Error("Tree: no error for a cut-off of 101%")
	}
}

// A profile whose children are out of order or duplicated is rendered as
// its canonical form, and the argument is left alone.
func TestNotCanonical(t *testing.T) {
	p := &profile.Profile{Meta: profile.Meta{Mode: profile.ModeExact}, Root: &profile.Node{Children: []*profile.Node{
		{Func: profiletest.Func("b"), Instructions: 2},
		{Func: profiletest.Func("a"), Instructions: 1},
		{Func: profiletest.Func("b"), Instructions: 3},
	}}, TotalInstructions: 6}
	var got, want bytes.Buffer
	if err := Top(&got, p, TopOptions{}); err != nil {
		t.Fatal(err)
	}
	if len(p.Root.Children) != 3 {
		t.Error("Top modified its argument")
	}
	if err := Top(&want, profiletest.Profile(profile.ModeExact, "a 1", "b 5"), TopOptions{}); err != nil {
		t.Fatal(err)
	}
	// The headers differ (buildProfile's Meta); the rows must not.
	g, w := strings.SplitN(got.String(), "\n", 2)[1], strings.SplitN(want.String(), "\n", 2)[1]
	if g != w {
		t.Errorf("got\n%s\nwant\n%s", g, w)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteError(t *testing.T) {
	if err := Top(failWriter{}, demoProfile(), TopOptions{}); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("Top: error %v, want disk full", err)
	}
	if err := Tree(failWriter{}, demoProfile(), TreeOptions{}); err == nil {
		t.Error("Tree: no error")
	}
	if err := HTML(failWriter{}, demoProfile()); err == nil {
		t.Error("HTML: no error")
	}
	if _, err := Compare(failWriter{}, demoProfile(), demoProfile(), CompareOptions{}); err == nil {
		t.Error("Compare: no error")
	}
}

// TestRealProfile renders testdata/json.kprof, a profile of the
// encoding/json workload taken by a kprof-built binary (see
// testdata/screenshot.sh), in every form.
func TestRealProfile(t *testing.T) {
	p, err := profile.ParseFile(filepath.Join("testdata", "json.kprof"))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Top(&b, p, TopOptions{NodeCount: 3}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	if !strings.HasPrefix(lines[0], "program: json  mode: sample  granularity: 1000 (jitter 100)") ||
		!strings.HasSuffix(lines[3], "  encoding/json.(*decodeState).rescanLiteral") ||
		!strings.HasPrefix(lines[6], "showing 3 of ") {
		t.Errorf("top:\n%s", b.String())
	}
	b.Reset()
	if err := Tree(&b, p, TreeOptions{Cutoff: 1}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "  main.main\n") || !strings.Contains(b.String(), "calling contexts below the 1% cut-off hidden") {
		t.Errorf("tree:\n%s", b.String())
	}
	pp, err := Pprof(p)
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	for _, s := range pp.Sample {
		sum += s.Value[1]
	}
	if sum != p.SumInstructions() {
		t.Errorf("pprof holds %d instructions, the profile %d", sum, p.SumInstructions())
	}
	if err := HTML(&bytes.Buffer{}, p); err != nil {
		t.Fatal(err)
	}
	b.Reset()
	if r, err := Compare(&b, p, p, CompareOptions{}); err != nil || !r.Identical || !strings.HasPrefix(b.String(), "overlap: 100.00%\n") {
		t.Errorf("compared with itself: %v, %+v\n%s", err, r, b.String())
	}
}
