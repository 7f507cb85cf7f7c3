package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
)

// kprof's own cache, os.UserCacheDir()/kprof (~/.cache/kprof on Linux),
// holds what its builds reuse: patched compilers (compile-*, about 36 MB
// each, one per Go release and version of kprof's compiler patches), the
// sources of the packages kprof links into programs (support-*, one per
// kprof binary and set of instrumentation options), the binary's hash
// (self-*), which prebuilt packages a build can reuse (prebuilt-*.json)
// and, for a Go release newer than the one that built kprof, kprof built
// with it (host-*, host.go); the compiled packages are in the go command's build
// cache. A kprof that is upgraded often leaves all of it behind, so, as
// the go command does with its build cache, a build marks what it uses
// (its modification time, at most once per markInterval) and, at most
// once per trimInterval, removes the entries no build has used for
// trimAge.
const (
	trimAge      = 5 * 24 * time.Hour
	trimInterval = 24 * time.Hour
	markInterval = time.Hour
)

// cacheEntries are the prefixes of the cache's entries that trimming may
// remove (compile- also covers an interrupted compiler build's
// compile-build-*, host- host-build-*).
var cacheEntries = []string{"compile-", "support-", "self-", "prebuilt-", "host-"}

// kprofCache returns kprof's cache directory.
func kprofCache() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory for kprof's compilers and packages: %v (set $XDG_CACHE_HOME or $HOME)", err)
	}
	return filepath.Join(dir, "kprof"), nil
}

// markUsed records that a build used the cache entry path (best effort).
func markUsed(path string, now time.Time) {
	if fi, err := os.Stat(path); err == nil && now.Sub(fi.ModTime()) > markInterval {
		os.Chtimes(path, now, now)
	}
}

// trimCache removes the entries of the cache dir that no build used for
// trimAge, if it has not done so for trimInterval (the time of its last
// trim is in dir/trim.txt), and returns their names.
func trimCache(dir string, now time.Time) []string {
	stamp := filepath.Join(dir, "trim.txt")
	if data, err := os.ReadFile(stamp); err == nil {
		if t, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64); err == nil {
			if last := time.Unix(t, 0); !last.After(now) && now.Sub(last) < trimInterval {
				return nil
			}
		}
	}
	// The stamp first: builds that start meanwhile do not trim too.
	if os.WriteFile(stamp, []byte(strconv.FormatInt(now.Unix(), 10)+"\n"), 0o666) != nil {
		return nil // (no cache yet, or not writable: nothing to trim)
	}
	// (An entry in use may look up to markInterval older than it is.)
	old := func(fi os.FileInfo) bool { return now.Sub(fi.ModTime()) >= trimAge+markInterval }
	removed, _ := removeEntries(dir, old) // (best effort, as the go command's trim)
	return removed
}

// removeEntries removes the cache entries of dir that old reports on and
// returns their names, and what it could not remove. An entry's time is
// read again just before it is removed: a build may have marked it
// meanwhile.
func removeEntries(dir string, old func(os.FileInfo) bool) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var removed []string
	var errs []error
	for _, e := range entries {
		if !isCacheEntry(e.Name()) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if fi, err := os.Lstat(p); err != nil || !old(fi) {
			continue
		}
		if err := os.RemoveAll(p); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, e.Name())
	}
	return removed, errors.Join(errs...)
}

func isCacheEntry(name string) bool {
	for _, p := range cacheEntries {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// cleanCommand is "kprof clean": it empties kprof's cache, as go clean
// -cache empties the go command's. (The instrumented packages themselves
// are in the go command's build cache.)
func cleanCommand() *cli.Command {
	return &cli.Command{
		Name:  "clean",
		Usage: "remove kprof's cached compilers and package sources (the next build makes them again)",
		Description: "kprof keeps, in its user cache directory (~/.cache/kprof on Linux), a patched compiler per\n" +
			"Go release (about 36 MB each) and the sources of the packages it links into programs, per kprof\n" +
			"binary. Builds remove what no build used for 5 days, once a day; kprof clean removes all of it\n" +
			"now (a kprof build running meanwhile fails). The instrumented packages are in the go command's\n" +
			"build cache: go clean -cache removes those.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "n", Usage: "print what would be removed, and remove nothing"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageError{fmt.Errorf("clean takes no arguments (got %q)", c.Args().First())}
			}
			dir, err := kprofCache()
			if err != nil {
				return err
			}
			all := func(os.FileInfo) bool { return true }
			if c.Bool("n") {
				all = func(fi os.FileInfo) bool {
					fmt.Println(filepath.Join(dir, fi.Name()))
					return false
				}
			}
			removed, err := removeEntries(dir, all)
			if !c.Bool("n") {
				fmt.Fprintf(os.Stderr, "kprof: removed %d entries from %s\n", len(removed), dir)
			}
			if err != nil {
				return fmt.Errorf("cleaning %s: %w", dir, err)
			}
			return nil
		},
	}
}
