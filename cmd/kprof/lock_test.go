//go:build unix

package main

import (
	"path/filepath"
	"testing"
	"time"
)

// TestLockEntry checks that a second lock of a cache entry waits for the
// first's release (concurrent builds of the same linked-in packages).
func TestLockEntry(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prebuilt-x.json.lock")
	unlock := lockEntry(path, "waiting")
	got := make(chan struct{})
	go func() {
		u := lockEntry(path, "waiting")
		close(got)
		u()
	}()
	select {
	case <-got:
		t.Fatal("a second lock was taken while the first was held")
	case <-time.After(100 * time.Millisecond):
	}
	unlock()
	select {
	case <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("the second lock was not taken after the first's release")
	}
}
