//go:build kprof_patched_runtime

// This file is compiled only in kprof builds: the -toolexec wrapper puts it
// in place of state_plain.go. The constraint above is never set by anyone.

package counter

import (
	"runtime"
	"unsafe"
)

type state = runtime.KprofGState

// st returns the running goroutine's state: a field of its g.
func st() *state { return runtime.KprofState() }

func alloc(size uintptr) unsafe.Pointer                     { return runtime.KprofAlloc(size) }
func forEachOther(f func([]uintptr, int64, unsafe.Pointer)) { runtime.KprofForEachOther(f) }
func onUserStack() bool                                     { return runtime.KprofOnUserStack() }
func setGoexitHook(f func())                                { runtime.KprofSetGoexitHook(f) }
func goHidden(f func())                                     { runtime.KprofGo(f) }
func yield()                                                { runtime.KprofYield() }
func signalDelivered(s uint32) int                          { return runtime.KprofSignalDelivered(s) }
func addExitHook(f func())                                  { runtime.KprofAddExitHook(f) }
func setGrowth(obj, perByte int64)                          { runtime.KprofSetGrowth(obj, perByte) }
func executed() int64                                       { return runtime.KprofExecuted() }
func claimPending() int64                                   { return runtime.KprofClaimPending() }
func stopTheWorld() func() {
	if runtime.KprofStopTheWorld() {
		return runtime.KprofStartTheWorld
	}
	return func() {}
}
