package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kprof/kprof/profile"
)

// TestMergeCLI runs kprof merge as a user would: the merge is
// profile.Merge's with the labels all inputs share; an existing output is
// kept unless --force (-f) is given; every error is one line, exit
// status 2, and leaves no output behind.
func TestMergeCLI(t *testing.T) {
	bin := buildKprof(t)
	dir := t.TempDir()
	a := writeTestProfile(t, dir, "a.kprof", profile.ModeExact, "main.main 100", "main.main;main.work 600")
	b := writeTestProfile(t, dir, "b.kprof", profile.ModeExact, "main.main 100", "main.main;main.other 300")
	setLabels(t, a, profile.Label{Key: "env", Value: "prod"}, profile.Label{Key: "zone", Value: "1"})
	setLabels(t, b, profile.Label{Key: "env", Value: "prod"}, profile.Label{Key: "zone", Value: "2"})
	p, err := profile.ParseFile(b)
	if err != nil {
		t.Fatal(err)
	}
	p.Meta.MetricVersion++
	if err := p.WriteFile(filepath.Join(dir, "metric.kprof")); err != nil {
		t.Fatal(err)
	}
	// Calls whose sum over the tree fits, and does not once doubled,
	// though each context's does.
	big, err := profile.ParseFile(writeTestProfile(t, dir, "big.kprof", profile.ModeExact, "main.main 1", "main.main;main.work 1"))
	if err != nil {
		t.Fatal(err)
	}
	big.Walk(func(_ []profile.Func, n *profile.Node) { n.Calls = 3 << 60 })
	if err := big.WriteFile(filepath.Join(dir, "big.kprof")); err != nil {
		t.Fatal(err)
	}
	old := []byte("an existing file\n")

	for _, tc := range []struct {
		name   string
		args   []string
		exists bool   // out.kprof exists before
		status int    // want
		stderr string // want, exactly
		labels string // want, of out.kprof ("" when it must be unchanged or absent)
	}{
		{"merge", []string{"merge", "-o", "out.kprof", "a.kprof", "b.kprof"}, false, 0, "", "[{env prod}]"},
		{"one file", []string{"merge", "-o", "out.kprof", "a.kprof"}, false, 0, "", "[{env prod} {zone 1}]"},
		{"flags after the files", []string{"merge", "a.kprof", "b.kprof", "-o", "out.kprof"}, false, 0, "", "[{env prod}]"},
		{"exists", []string{"merge", "-o", "out.kprof", "a.kprof", "b.kprof"}, true, 2, "kprof: out.kprof exists: --force replaces it\n", ""},
		{"force", []string{"merge", "--force", "-o", "out.kprof", "a.kprof", "b.kprof"}, true, 0, "", "[{env prod}]"},
		{"-f", []string{"merge", "-f", "-o", "out.kprof", "a.kprof", "b.kprof"}, true, 0, "", "[{env prod}]"},
		{"no output", []string{"merge", "a.kprof"}, false, 2, "kprof: merge: no output file (kprof merge -o OUT PROFILE...)\n", ""},
		{"no input", []string{"merge", "-o", "out.kprof"}, false, 2, "kprof: merge: no profile given (kprof merge -o OUT PROFILE...)\n", ""},
		{"missing input", []string{"merge", "-o", "out.kprof", "a.kprof", "missing.kprof"}, false, 2, "kprof: missing.kprof: no such file or directory\n", ""},
		{"metrics", []string{"merge", "-o", "out.kprof", "a.kprof", "metric.kprof"}, false, 2,
			"kprof: metric.kprof and a.kprof: profiles count different metrics: instructions (metric version 2) and instructions (metric version 1); they cannot be merged (profile both with the same kprof and -metric)\n", ""},
		{"sums overflow", []string{"merge", "-o", "out.kprof", "big.kprof", "big.kprof"}, false, 2, "kprof: the merge of big.kprof, big.kprof: invalid profile: the sum of calls over all nodes overflows int64 (at node \"main.work\" at depth 2)\n", ""},
		{"no directory", []string{"merge", "-o", "nodir/out.kprof", "a.kprof"}, false, 2, "kprof: nodir/out.kprof: no such file or directory\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, "out.kprof")
			os.Remove(out)
			if tc.exists {
				if err := os.WriteFile(out, old, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			r := runKprof(t, bin, dir, tc.args...)
			if r.status != tc.status || r.stderr != tc.stderr || r.stdout != "" {
				t.Errorf("status %d, stderr %q, stdout %q; want %d, %q, nothing", r.status, r.stderr, r.stdout, tc.status, tc.stderr)
			}
			got, err := os.ReadFile(out)
			switch {
			case tc.labels == "" && tc.exists:
				if !bytes.Equal(got, old) {
					t.Errorf("out.kprof changed: %q", got)
				}
				return
			case tc.labels == "":
				if !os.IsNotExist(err) {
					t.Errorf("out.kprof written: %v", err)
				}
				return
			}
			var inputs []*profile.Profile
			for _, f := range tc.args {
				if strings.HasSuffix(f, ".kprof") && f != "out.kprof" {
					p, err := profile.ParseFile(filepath.Join(dir, f))
					if err != nil {
						t.Fatal(err)
					}
					inputs = append(inputs, p)
				}
			}
			want, err := profile.Merge(inputs...)
			if err != nil {
				t.Fatal(err)
			}
			m, err := profile.Parse(bytes.NewReader(got))
			if err != nil {
				t.Fatal(err)
			}
			want.Meta.Labels = m.Meta.Labels
			var wb bytes.Buffer
			if err := want.Write(&wb); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, wb.Bytes()) {
				t.Errorf("out.kprof is not the merge of %v", tc.args)
			}
			if s := labelsOf(m); s != tc.labels {
				t.Errorf("labels %s, want %s", s, tc.labels)
			}
			if entries, _ := filepath.Glob(filepath.Join(dir, ".out.kprof.tmp*")); len(entries) != 0 {
				t.Errorf("temporary files left: %v", entries)
			}
		})
	}

	// kprof report prints the labels, and those the files it merges share.
	for _, tc := range []struct {
		files []string
		want  string
	}{
		{[]string{"a.kprof"}, "labels: env=prod zone=1\n"},
		{[]string{"a.kprof", "b.kprof"}, "labels: env=prod\n"},
	} {
		r := runKprof(t, bin, dir, append([]string{"report"}, tc.files...)...)
		if lines := strings.SplitAfter(r.stdout, "\n"); r.status != 0 || len(lines) < 2 || lines[1] != tc.want {
			t.Errorf("kprof report %v: status %d, header %q, want its second line %q", tc.files, r.status, r.stdout, tc.want)
		}
	}
}

// setLabels rewrites the profile file path with labels.
func setLabels(t *testing.T, path string, labels ...profile.Label) {
	t.Helper()
	p, err := profile.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p.Meta.Labels = labels
	if err := p.WriteFile(path); err != nil {
		t.Fatal(err)
	}
}

func labelsOf(p *profile.Profile) string {
	var b strings.Builder
	b.WriteString("[")
	for i, l := range p.Meta.Labels {
		if i > 0 {
			b.WriteString(" ")
		}
		b.WriteString("{" + l.Key + " " + l.Value + "}")
	}
	return b.String() + "]"
}
