package rewrite

// poolFile is added to package sync in deterministic mode: sync.Pool keeps
// its items per goroutine, in the runtime's g (runtime.KprofPoolCache),
// instead of per P. Whether Get finds an item then depends only on what the
// same goroutine did before, not on which P it ran on, on other goroutines
// or on when the collector ran. The order follows a pool on one P: the
// pool's private item first, then the most recently put. A goroutine keeps
// at most runtime.KprofPoolCap items (the oldest go first); they are
// dropped when it exits, and a GC the program asks for (runtime.GC) ages
// them as the victim cache does. The Pool documentation allows all of it:
// "Any item stored in the Pool may be removed automatically at any time".
const poolFile = `// Code added by kprof. DO NOT EDIT.

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
`

// patchSync makes sync.Pool deterministic (poolFile). It returns the new
// list of Go files, to be instrumented like any package's.
func patchSync(files []string, workDir, goVersion string) ([]string, error) {
	edits := []edit{
		{"func (p *Pool) Put(x any) {\n", "func (p *Pool) Put(x any) { if kprofDetPool { kprofPut(p, x); return }\n"},
		{"func (p *Pool) Get() any {\n", "func (p *Pool) Get() any { if kprofDetPool { return kprofGet(p) }\n"},
	}
	return patchPackage(files, workDir, goVersion, "sync", "pool.go", "kprof_pool.go", poolFile,
		func(src []byte, what func(string) error) ([]byte, error) {
			return applyEdits(src, "pool.go", edits, what)
		})
}
