// Package reports renders kprof profiles ([profile.Profile]) for people and
// for other tools: text top lists and calling-context trees, pprof protocol
// buffers for go tool pprof and continuous-profiling services, a
// self-contained HTML flame graph, and the comparison of two profiles that
// kprof compare prints (paper §7: overlap percentage, δb, profile size).
// Benchmark gating is package gate's.
//
// The package only reads profiles; it never modifies its arguments and
// never depends on how a profile was made (it does not import package
// rewrite). Everything it writes is deterministic: the same profile gives
// the same bytes, so reports can be committed, diffed and cached.
//
// # Percentages
//
// A calling context's share is its Instructions divided by the sum of
// Instructions over all contexts of the profile ([profile.Profile.SumInstructions]),
// the rce of paper §7.1, so the flat column of a top list adds up to 100%
// and the shares agree with those of the overlap measures. The header of
// every text report gives the profile's exact TotalInstructions as well;
// when the contexts hold a different number (estimated in sample mode, or
// instructions that ran before any calling context was recorded), a second
// header line says how the two relate.
//
// # Functions and names
//
// A function is an [profile.Func]: name, declaring file and declaration
// line. Two functions with the same name but different files (possible when
// a profile holds several programs' code) are shown with their file:line so
// that text reports never merge them silently.
package reports
