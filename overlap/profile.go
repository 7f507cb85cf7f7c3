// Package overlap owns kprof's profile model — a calling-context tree (CCT)
// with totals and metadata — together with its file codec and the measures
// that compare two profiles (paper §7): the overlap percentage on calling
// contexts and on flat functions, δb between totals, and profile size.
//
// The package depends on the standard library only: the agent linked into
// instrumented programs uses it to write profiles.
package overlap

// MetricVersion identifies the instruction metric (see package rewrite). A
// change of what is counted changes every profile, so it is recorded in each
// profile and compared by kprof compare.
const MetricVersion = 1

// Modes of the agent that produced a profile.
const (
	ModeSample = "sample" // sampling agent (SA): Samples and estimated Instructions
	ModeExact  = "exact"  // exact agent (JP): exact Instructions and Calls
)

// Meta describes how and where a profile was taken.
type Meta struct {
	Mode          string // ModeSample or ModeExact, or a custom agent's name
	Granularity   int64  // sampling granularity g (instructions between samples)
	Jitter        int64  // R: each granularity is g + r, r uniform in [0, R)
	Seed          uint64 // PRNG seed shared by every goroutine
	MetricVersion int    // MetricVersion of the instrumenter
	KprofVersion  string
	GoVersion     string
	GOOS, GOARCH  string
	Program       string // program name (base name of os.Args[0])
}

// Func identifies a function the way go tool pprof names it.
type Func struct {
	Name string // e.g. "net/http.(*Server).Serve.func2"
	File string // declaring file
	Line int    // line of the declaration
}

// Node is one calling context: the path from the root to the node is the
// reified stack.
type Node struct {
	Func         Func
	Samples      int64 // samples whose stack ends here
	Instructions int64 // instructions attributed to this context (estimated in sample mode, exact in exact mode)
	Calls        int64 // exact mode: calls that entered this context (0 when not counted)
	Children     []*Node
}

// Profile is a calling-context tree with its totals and metadata. Root is a
// synthetic node (empty Func) whose children are the goroutines' outermost
// instrumented functions.
type Profile struct {
	Meta Meta
	Root *Node
	// TotalInstructions is the exact number of counted instructions the
	// program executed (the agent keeps it exactly in every mode), the b of
	// paper §7.2.
	TotalInstructions int64
	// TotalSamples is the number of samples taken.
	TotalSamples int64
}
