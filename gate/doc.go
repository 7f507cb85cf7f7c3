// Package gate owns benchmark gating, what kprof gate runs in CI: it reads
// go test -bench output ([ReadBenchmarks]; kprof test adds an exact
// instructions/op to every benchmark, and ns/op-est under the cost
// metric), compares a change's benchmarks with a baseline's against
// relative thresholds and absolute limits ([Compare], [Options], [Rule]),
// configured per benchmark in a JSON file ([Config], [LoadConfig]), and
// explains each regression with the calling contexts whose instructions
// per op changed most, from the per-benchmark profiles of kprof test
// --profile. A [Result] renders as text, Markdown (for a pull request
// comment) or JSON, and its [Result.Verdict] is the command's exit status
// ([Pass], [Fail], [Err]). [BaselineStore] keeps named baselines
// in a directory, so that a CI job can save main's figures and gate
// branches against them.
//
// Exact units (instructions/op, and any unit the input declares with a
// "Unit U assume=exact" line, as kprof test prints) are compared exactly:
// a benchmark run several times (go test -count) must give the same value
// in every run. Other units (ns/op, B/op, …) are compared by their median.
// cmd/kprof parses the flags and calls this package; the profiles come
// from package profile.
package gate
