//go:build unix

package main

import (
	"os"
	"syscall"
)

// lockEntry takes an exclusive lock on path (created if need be) and
// returns its release, waiting, with progress shown, while another
// process holds it. Best effort: where the lock cannot be taken, the
// build goes on without it (at worst, it does what another does too).
func lockEntry(path, waiting string) (unlock func()) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return func() {}
	}
	fd := int(f.Fd())
	if err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		progress := newProgress(waiting)
		err = syscall.Flock(fd, syscall.LOCK_EX)
		progress.done()
		if err != nil {
			f.Close()
			return func() {}
		}
	}
	return func() {
		syscall.Flock(fd, syscall.LOCK_UN)
		f.Close()
	}
}
