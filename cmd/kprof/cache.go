package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
)

// kprof's own cache, os.UserCacheDir()/kprof, holds what its builds reuse,
// per kprof binary and toolchain: patched compilers (compile-*, about 36
// MB each), the packages kprof links in as a module (support-*), the
// binary's hash (self-*), and which prebuilt packages a build can reuse
// (prebuilt-*.json). A kprof that is upgraded often leaves all of it
// behind, so, as the go command does with its build cache, a build marks
// what it uses (its modification time, at most once per markInterval) and,
// at most once per trimInterval, removes the entries no build has used for
// trimAge.
const (
	trimAge      = 5 * 24 * time.Hour
	trimInterval = 24 * time.Hour
	markInterval = time.Hour
)

// cacheEntries are the prefixes of the cache's entries that trimming may
// remove (compile- also covers an interrupted compiler build's
// compile-build-*).
var cacheEntries = []string{"compile-", "support-", "self-", "prebuilt-"}

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
	return removeEntries(dir, func(fi os.FileInfo) bool { return now.Sub(fi.ModTime()) >= trimAge })
}

// removeEntries removes the cache entries of dir that old reports on and
// returns their names.
func removeEntries(dir string, old func(os.FileInfo) bool) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var removed []string
	for _, e := range entries {
		if !isCacheEntry(e.Name()) {
			continue
		}
		fi, err := e.Info()
		if err != nil || !old(fi) {
			continue
		}
		if os.RemoveAll(filepath.Join(dir, e.Name())) == nil {
			removed = append(removed, e.Name())
		}
	}
	return removed
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
		Usage: "remove kprof's cached compilers and packages (the next build makes them again)",
		Description: "kprof keeps, in its user cache directory, a patched compiler per kprof binary and Go release\n" +
			"(about 36 MB each) and the packages it links into programs. Builds remove what no build used\n" +
			"for 5 days, once a day; kprof clean removes all of it now. The instrumented packages are in\n" +
			"the go command's build cache: go clean -cache removes those.",
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
			removed := removeEntries(dir, all)
			if !c.Bool("n") {
				fmt.Fprintf(os.Stderr, "kprof: removed %d entries from %s\n", len(removed), dir)
			}
			return nil
		},
	}
}
