//go:build kprofpatch

// Code kprof adds to package sync: sync.Pool kept per goroutine in deterministic mode.

package sync

import (
	"runtime"
	"unsafe"
)

const kprofDetPool = true

func kprofPut(p *Pool, x any) {
	if x == nil {
		return
	}
	_ = p.New // a nil *Pool panics, as sync.Pool's Put does
	c := runtime.KprofPoolCache()
	key := unsafe.Pointer(p)
	private := true
	n := 0
	for n < len(c) && c[n].Pool != nil {
		if c[n].Pool == key && c[n].Private {
			private = false
		}
		n++
	}
	if n == len(c) {
		copy(c[:], c[1:])
		n--
	}
	c[n] = runtime.KprofPoolItem{Pool: key, X: x, Private: private}
}

func kprofGet(p *Pool) any {
	c := runtime.KprofPoolCache()
	key := unsafe.Pointer(p)
	n := 0
	for n < len(c) && c[n].Pool != nil {
		n++
	}
	// The pool's private item, else its most recently put one.
	at := -1
	for i := n - 1; i >= 0; i-- {
		if c[i].Pool == key {
			if at < 0 {
				at = i
			}
			if c[i].Private {
				at = i
				break
			}
		}
	}
	if at < 0 {
		if p.New != nil {
			return p.New()
		}
		return nil
	}
	x := c[at].X
	// Close the gap: the items above move down one place (usually none:
	// a goroutine gets back what it put last).
	if at < n-1 {
		copy(c[at:n-1], c[at+1:n])
	}
	c[n-1] = runtime.KprofPoolItem{}
	return x
}
