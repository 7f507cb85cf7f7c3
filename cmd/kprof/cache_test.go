package main

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/kprof/kprof/toolexec"
	"github.com/urfave/cli/v2"
)

func TestTrimCache(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	// Entries by name, with the age of their modification time.
	entries := map[string]time.Duration{
		"compile-go1.26.8-0123456789abcdef": 6 * day,
		"compile-go1.27.3-fedcba9876543210": 4 * day,
		"compile-build-123":                 10 * day,          // an interrupted build
		"support-aaaa":                      5*day + time.Hour, // (marks are hourly: an hour's grace)
		"support-bbbb":                      5*day + time.Hour - time.Minute,
		"self-cccc":                         30 * day,
		"prebuilt-dddd.json":                7 * day,
		"prebuilt-eeee.json":                time.Hour,
		"no-modcache":                       100 * day, // not an entry: kept
		"notes.txt":                         100 * day, // not kprof's: kept
	}
	tests := []struct {
		name    string
		stamp   string // trim.txt's content ("": none)
		removed []string
	}{
		{"no stamp", "", []string{"compile-build-123", "compile-go1.26.8-0123456789abcdef", "prebuilt-dddd.json", "self-cccc", "support-aaaa"}},
		{"trimmed a day ago", strconv.FormatInt(now.Add(-day).Unix(), 10), []string{"compile-build-123", "compile-go1.26.8-0123456789abcdef", "prebuilt-dddd.json", "self-cccc", "support-aaaa"}},
		{"trimmed an hour ago", strconv.FormatInt(now.Add(-time.Hour).Unix(), 10), nil},
		{"stamp in the future", strconv.FormatInt(now.Add(time.Hour).Unix(), 10), []string{"compile-build-123", "compile-go1.26.8-0123456789abcdef", "prebuilt-dddd.json", "self-cccc", "support-aaaa"}},
		{"bad stamp", "yesterday", []string{"compile-build-123", "compile-go1.26.8-0123456789abcdef", "prebuilt-dddd.json", "self-cccc", "support-aaaa"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, age := range entries {
				p := filepath.Join(dir, name)
				if filepath.Ext(name) == "" {
					// A directory with a read-only file, as support modules are.
					if err := os.MkdirAll(p, 0o777); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(filepath.Join(p, "go.mod"), []byte("module x\n"), 0o444); err != nil {
						t.Fatal(err)
					}
				} else if err := os.WriteFile(p, []byte("{}"), 0o666); err != nil {
					t.Fatal(err)
				}
				mt := now.Add(-age)
				if err := os.Chtimes(p, mt, mt); err != nil {
					t.Fatal(err)
				}
			}
			if tt.stamp != "" {
				if err := os.WriteFile(filepath.Join(dir, "trim.txt"), []byte(tt.stamp+"\n"), 0o666); err != nil {
					t.Fatal(err)
				}
			}
			removed := trimCache(dir, now)
			slices.Sort(removed)
			if !slices.Equal(removed, tt.removed) {
				t.Errorf("removed %q, want %q", removed, tt.removed)
			}
			for name := range entries {
				_, err := os.Stat(filepath.Join(dir, name))
				if gone := os.IsNotExist(err); gone != slices.Contains(tt.removed, name) {
					t.Errorf("%s: removed %v, want %v", name, gone, !gone)
				}
			}
			// The stamp says now, and a second trim right after does nothing.
			if tt.removed != nil {
				if again := trimCache(dir, now.Add(time.Minute)); again != nil {
					t.Errorf("second trim removed %q", again)
				}
			}
		})
	}
}

func TestMarkUsed(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	for _, age := range []time.Duration{10 * time.Minute, 2 * time.Hour, 10 * 24 * time.Hour} {
		p := filepath.Join(t.TempDir(), "support-x")
		if err := os.Mkdir(p, 0o777); err != nil {
			t.Fatal(err)
		}
		mt := now.Add(-age)
		if err := os.Chtimes(p, mt, mt); err != nil {
			t.Fatal(err)
		}
		markUsed(p, now)
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		want := now
		if age <= markInterval {
			want = mt // recent enough: left alone
		}
		if !fi.ModTime().Equal(want) {
			t.Errorf("age %v: modification time %v, want %v", age, fi.ModTime(), want)
		}
	}
	markUsed(filepath.Join(t.TempDir(), "missing"), now) // no panic, no file
}

// TestClean: kprof clean -n lists kprof's entries in its cache and removes
// nothing; kprof clean removes them, and leaves what is not kprof's.
func TestClean(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	t.Setenv("HOME", cache) // (os.UserCacheDir on other systems)
	dir, err := kprofCache()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"compile-go1.26.8-0123456789abcdef/compile", "support-aaaa/go.mod", "self-cccc", "notes/x"} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o444); err != nil {
			t.Fatal(err)
		}
	}
	list := func() []string {
		es, _ := os.ReadDir(dir)
		var names []string
		for _, e := range es {
			names = append(names, e.Name())
		}
		return names
	}
	all := list()
	app := &cli.App{Name: "kprof", Commands: []*cli.Command{cleanCommand()}, Writer: os.Stdout}
	if err := app.Run([]string{"kprof", "clean", "-n"}); err != nil {
		t.Fatal(err)
	}
	if got := list(); !slices.Equal(got, all) {
		t.Errorf("clean -n left %q, want %q", got, all)
	}
	if err := app.Run([]string{"kprof", "clean"}); err != nil {
		t.Fatal(err)
	}
	if got := list(); !slices.Equal(got, []string{"notes"}) {
		t.Errorf("clean left %q, want [notes]", got)
	}
	if err := app.Run([]string{"kprof", "clean"}); err != nil {
		t.Errorf("clean of a clean cache: %v", err)
	}
}

// TestLoadPrebuiltNeedsSources: a prebuilt configuration whose support
// module's sources are gone (trimmed, removed by hand) is not used: the
// build makes them again instead of failing to relink.
func TestLoadPrebuiltNeedsSources(t *testing.T) {
	dir := t.TempDir()
	export := filepath.Join(dir, "export.a")
	src := filepath.Join(dir, "support-x", "agent")
	for _, p := range []string{export, filepath.Join(src, "agent.go")} {
		if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	cfg := &toolexec.Config{
		Exports: map[string]string{"github.com/kprof/kprof/agent": export},
		Support: []toolexec.SupportPkg{
			{ImportPath: "fmt", Dir: filepath.Join(dir, "goroot-fmt"), Standard: true}, // (not checked)
			{ImportPath: "github.com/kprof/kprof/agent", Dir: src, Export: export},
		},
	}
	key := filepath.Join(dir, "prebuilt-x.json")
	savePrebuilt(key, cfg)
	if !loadPrebuilt(key, &toolexec.Config{}) {
		t.Fatal("loadPrebuilt: false with every file in place")
	}
	if err := os.RemoveAll(filepath.Join(dir, "support-x")); err != nil {
		t.Fatal(err)
	}
	if loadPrebuilt(key, &toolexec.Config{}) {
		t.Error("loadPrebuilt: true with the support module's sources gone")
	}
}
