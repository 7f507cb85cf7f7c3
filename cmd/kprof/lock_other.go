//go:build !unix

package main

// lockEntry does not lock where there is no flock: concurrent builds of
// the same packages each build them.
func lockEntry(path, waiting string) (unlock func()) { return func() {} }
