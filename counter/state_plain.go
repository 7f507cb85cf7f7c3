//go:build !kprof_patched_runtime

// Outside kprof builds the runtime has no per-goroutine kprof field. This
// file lets the package build, vet and unit-test its bookkeeping against a
// single state owned by the calling test; kprof build never compiles it.

package counter

import (
	"runtime"
	"unsafe"
)

type state struct {
	Count   int64
	Gran    int64
	Depth   int
	InAgent bool
	Known   bool
	Stack   []uintptr
	Dirty   int
	Local   unsafe.Pointer
	Done    int64
	Frozen  int64
}

var plain state

// allocated keeps what alloc handed out reachable: the memory holds no
// pointers the collector scans, so records that only other allocated
// records point to would otherwise be freed under them.
var allocated [][]uint64

func st() *state { return &plain }
func alloc(size uintptr) unsafe.Pointer {
	b := make([]uint64, (size+7)/8)
	allocated = append(allocated, b)
	return unsafe.Pointer(unsafe.SliceData(b))
}
func forEachOther(f func([]uintptr, int64, unsafe.Pointer)) {}
func onUserStack() bool                                     { return true }
func setGoexitHook(f func())                                {}
func goHidden(f func())                                     { go f() }
func yield()                                                { runtime.Gosched() }
func signalDelivered(s uint32) int                          { return 0 }
func addExitHook(f func())                                  {}
func setGrowth(obj, perByte int64)                          {}
func claimPending() int64 {
	n := plain.Gran - plain.Count
	plain.Done += n
	plain.Count = plain.Gran
	return n
}
func executed() int64 {
	if plain.InAgent {
		return plain.Frozen
	}
	return plain.Done + plain.Gran - plain.Count
}
func stopTheWorld() func() { return func() {} }
