package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/kprof/kprof/profile"
)

const mergeHelp = `Adds up profiles, context by context, into one profile in kprof's
format: the files KPROF_INTERVAL or KPROF_EVERY wrote for one run (whose
merge is that run's end-of-run profile), or several runs of a program:

   kprof merge -o day.kprof server.*.kprof
   kprof compare day.kprof yesterday.kprof

kprof report merges the files it is given the same way. The profiles must
count the same metric. The result keeps the labels all of them share; its
other metadata is the first profile's. An existing output file is kept
unless --force is given; it is replaced only once the merge is complete.

Exit status 2 means a profile could not be read or merged, the output
could not be written, or the command line is wrong.`

func mergeCommand() *cli.Command {
	return &cli.Command{
		Name:        "merge",
		Usage:       "add up profiles (a run's interval files, several runs) into one",
		ArgsUsage:   "-o OUT PROFILE...",
		Description: mergeHelp,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "o", Usage: "write the merged profile to `FILE`"},
			&cli.BoolFlag{Name: "force", Aliases: []string{"f"}, Usage: "replace the output file if it exists"},
		},
		OnUsageError: onUsageError,
		Action:       runMerge,
	}
}

func runMerge(c *cli.Context) error {
	files, err := positional(c)
	if err != nil || files == nil {
		return err
	}
	out := c.String("o")
	switch {
	case out == "":
		return usageError{errors.New("merge: no output file (kprof merge -o OUT PROFILE...)")}
	case len(files) == 0:
		return usageError{errors.New("merge: no profile given (kprof merge -o OUT PROFILE...)")}
	}
	if _, err := os.Lstat(out); err == nil && !c.Bool("force") {
		return fail("%s exists: --force replaces it", out)
	}
	p, err := loadProfiles(files, isLarge(files))
	if err != nil {
		return err
	}
	if err := writeProfile(out, p, c.Bool("force")); err != nil {
		return fail("%s: %v", out, err)
	}
	return nil
}

// writeProfile writes p to path, atomically: a temporary file in the same
// directory, renamed over path with force, otherwise linked to path,
// which fails if path exists (created since it was checked) and keeps it.
func writeProfile(path string, p *profile.Profile, force bool) error {
	if force {
		return unwrapPathError(p.WriteFile(path))
	}
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return unwrapPathError(err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	_, err = f.Write(b.Bytes())
	if err == nil {
		err = f.Chmod(0o644)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return unwrapPathError(err)
	}
	if err := os.Link(tmp, path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("exists: --force replaces it")
		}
		var le *os.LinkError
		if errors.As(err, &le) {
			err = le.Err
		}
		return err
	}
	return nil
}

// unwrapPathError drops the operation and path an fs.PathError repeats.
func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
