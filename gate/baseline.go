package gate

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/kprof/kprof/profile"
)

// A baseline's files in its directory.
const (
	baselineBenchmarks = "benchmarks.txt"
	baselineProfiles   = "profiles"
)

// BaselineStore keeps named baselines in a directory: NAME/benchmarks.txt
// is the benchmark output as it was given, NAME/profiles/ its
// per-benchmark profiles, if any were saved.
type BaselineStore struct {
	Dir string
}

var baselineNameSyntax = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// CheckBaselineName reports whether name is a valid baseline name.
func CheckBaselineName(name string) error {
	if !baselineNameSyntax.MatchString(name) {
		return fmt.Errorf("baseline name %q: use letters, digits, '.', '_' and '-' (such as main or v1.2)", name)
	}
	return nil
}

// Load returns the saved benchmark output of baseline name, and its
// profile directory ("" when it has none).
func (s BaselineStore) Load(name string) (data []byte, profiles string, err error) {
	dir := filepath.Join(s.Dir, name)
	data, err = os.ReadFile(filepath.Join(dir, baselineBenchmarks))
	if errors.Is(err, fs.ErrNotExist) {
		msg := fmt.Sprintf("no baseline %q in %s", name, s.Dir)
		if names := s.Names(); len(names) > 0 {
			msg += " (saved: " + strings.Join(names, ", ") + ")"
		}
		return nil, "", fmt.Errorf("%s: save one with kprof gate --save-baseline %s FILE", msg, name)
	}
	if err != nil {
		return nil, "", fmt.Errorf("baseline %q: %v", name, err)
	}
	if fi, err := os.Stat(filepath.Join(dir, baselineProfiles)); err == nil && fi.IsDir() {
		profiles = filepath.Join(dir, baselineProfiles)
	}
	return data, profiles, nil
}

// Names returns the names of the saved baselines, sorted.
func (s BaselineStore) Names() []string {
	entries, _ := os.ReadDir(s.Dir)
	var names []string
	for _, e := range entries {
		if e.IsDir() && CheckBaselineName(e.Name()) == nil {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	return names
}

// Save stores data (benchmark output) as baseline name, with the profiles (*.kprof) of the
// directory profiles unless it is "". An existing baseline is replaced
// only when force is set, and then only once the new one is complete:
// the baseline is assembled in a temporary directory and renamed into
// place.
func (s BaselineStore) Save(name string, data []byte, profiles string, force bool) (err error) {
	final := filepath.Join(s.Dir, name)
	_, statErr := os.Stat(final)
	exists := statErr == nil
	if exists && !force {
		return fmt.Errorf("baseline %q already exists in %s: --force replaces it", name, s.Dir)
	}
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return fmt.Errorf("baseline %q: %v", name, unwrapPath(err))
	}
	tmp, err := os.MkdirTemp(s.Dir, "."+name+".tmp*")
	if err != nil {
		return fmt.Errorf("baseline %q: %v", name, unwrapPath(err))
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	if err := os.WriteFile(filepath.Join(tmp, baselineBenchmarks), data, 0o644); err != nil {
		return fmt.Errorf("baseline %q: %v", name, unwrapPath(err))
	}
	if profiles != "" {
		if err := copyProfiles(profiles, filepath.Join(tmp, baselineProfiles)); err != nil {
			return fmt.Errorf("baseline %q: %v", name, err)
		}
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return fmt.Errorf("baseline %q: %v", name, unwrapPath(err))
	}
	if !exists {
		if err := os.Rename(tmp, final); err != nil {
			return fmt.Errorf("baseline %q: %v", name, unwrapPath(err))
		}
		return nil
	}
	// Move the old baseline aside, the new one in, then drop the old.
	aside, err := os.MkdirTemp(s.Dir, "."+name+".old*")
	if err != nil {
		return fmt.Errorf("baseline %q: %v", name, unwrapPath(err))
	}
	aside = filepath.Join(aside, name)
	if err := os.Rename(final, aside); err != nil {
		os.Remove(filepath.Dir(aside))
		return fmt.Errorf("baseline %q: %v", name, unwrapPath(err))
	}
	if err := os.Rename(tmp, final); err != nil {
		os.Rename(aside, final)
		os.Remove(filepath.Dir(aside))
		return fmt.Errorf("baseline %q: %v", name, unwrapPath(err))
	}
	os.RemoveAll(filepath.Dir(aside))
	return nil
}

// copyProfiles copies the profiles (*.kprof) of directory from into the
// new directory to, checking that each one reads as a profile.
func copyProfiles(from, to string) error {
	entries, err := os.ReadDir(from)
	if err != nil {
		return fmt.Errorf("%s: %v", from, unwrapPath(err))
	}
	if err := os.Mkdir(to, 0o755); err != nil {
		return unwrapPath(err)
	}
	n := 0
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".kprof") {
			continue
		}
		src := filepath.Join(from, e.Name())
		p, err := profile.ParseFile(src)
		if err != nil {
			return err
		}
		if err := p.WriteFile(filepath.Join(to, e.Name())); err != nil {
			return err
		}
		n++
	}
	if n == 0 {
		return fmt.Errorf("%s has no profiles (*.kprof): was it written by kprof test -bench --profile?", from)
	}
	return nil
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %v", pe.Path, pe.Err)
	}
	return err
}
