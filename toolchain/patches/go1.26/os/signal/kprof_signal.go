//go:build kprofpatch

// Code kprof adds to package os/signal: how many of the program's
// subscriptions a signal was delivered to.

package signal

import _ "unsafe" // go:linkname

// kprofDelivered records in the runtime (kprof's patch pushes it here)
// that signal sig is being delivered to n channels.
func kprofDelivered(sig uint32, n int32)

// kprofCount records, before process sends signal n to the channels that
// want it (with handlers locked), how many they are: kprof's agent, which
// subscribes to SIGINT and SIGTERM itself, tells from it whether the
// program got the signal too (runtime.KprofSignalDelivered) — whatever
// the program does after, signal.Stop included.
func kprofCount(n int) {
	k := int32(0)
	for _, h := range handlers.m {
		if h.want(n) {
			k++
		}
	}
	kprofDelivered(uint32(n), k)
}
