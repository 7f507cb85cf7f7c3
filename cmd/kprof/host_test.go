package main

import "testing"

// TestNewerLanguage's unit part: which go command versions need a kprof
// built with their release.
func TestNewerLanguageVersions(t *testing.T) {
	for _, c := range []struct {
		goVersion, built string
		want             bool
	}{
		{"go1.27.3", "go1.26.8", true},
		{"go1.27rc1", "go1.26.8", true},
		{"go1.27.3 X:nodwarf5", "go1.26.8", true},
		{"go1.26.0", "go1.26.8", false}, // same language, older patch release
		{"go1.26.8", "go1.27.3", false},
		{"go1.27.3", "go1.27.0", false},
		{"devel go1.28-abcdef", "go1.26.8", false},
		{"go1.27.3", "devel go1.28-abcdef", false},
	} {
		if got := newerLanguage(c.goVersion, c.built); got != c.want {
			t.Errorf("newerLanguage(%q, %q) = %v, want %v", c.goVersion, c.built, got, c.want)
		}
	}
}
