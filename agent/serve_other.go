//go:build !linux

package agent

import "errors"

// ServeLive serves live profiles over HTTP on Linux only (see
// serve_linux.go), as kprof supports Linux only.
func ServeLive(addr string, l *Live) error {
	return errors.New("live profiles over HTTP need Linux")
}
