package counter

// costBuild reports whether the build's metric is cost. kprof build
// compiles this package with a file of its own in place of this one for
// -metric cost (toolexec), where it is true: the pops then sample what the
// runtime charged after a function's final check (charged). In every
// other build the compiler drops that code.
const costBuild = false
