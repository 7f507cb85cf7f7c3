package gate

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestGateBaselineStore checks saving and replacing without the binary.
func TestGateBaselineStore(t *testing.T) {
	s := BaselineStore{Dir: filepath.Join(t.TempDir(), "a", "b")}
	if _, _, err := s.Load("main"); err == nil || !strings.Contains(err.Error(), `no baseline "main" in `+s.Dir+": save one") {
		t.Errorf("load from nothing: %v", err)
	}
	one, two := []byte("one"), []byte("two")
	if err := s.Save("main", one, "", false); err != nil {
		t.Fatal(err)
	}
	if err := s.Save("main", two, "", false); err == nil {
		t.Error("replaced without force")
	}
	if data, profiles, err := s.Load("main"); err != nil || string(data) != "one" || profiles != "" {
		t.Errorf("load: %q %q %v", data, profiles, err)
	}
	// A failed replacement keeps the old baseline.
	if err := s.Save("main", two, filepath.Join(s.Dir, "missing"), true); err == nil {
		t.Error("saved with a missing profile directory")
	}
	if data, _, _ := s.Load("main"); string(data) != "one" {
		t.Errorf("a failed save changed the baseline to %q", data)
	}
	if err := s.Save("main", two, "", true); err != nil {
		t.Fatal(err)
	}
	if data, _, _ := s.Load("main"); string(data) != "two" {
		t.Errorf("forced save: %q", data)
	}
	if names := s.Names(); !slices.Equal(names, []string{"main"}) {
		t.Errorf("names %q: temporary directories left behind", names)
	}
	entries, _ := os.ReadDir(s.Dir)
	if len(entries) != 1 {
		t.Errorf("the store holds %d entries", len(entries))
	}
	for _, name := range []string{"", ".", "..", "a/b", ".hidden", "-x"} {
		if CheckBaselineName(name) == nil {
			t.Errorf("baseline name %q accepted", name)
		}
	}
}
