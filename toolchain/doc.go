// Package toolchain owns kprof's patches to the Go toolchain, one set per
// supported Go release: the compiler (a build of cmd/compile whose inliner
// treats kprof's inserted calls as free and whose back end lays kprof's
// checks out of the way), and the compile steps of packages runtime (the
// per-goroutine counter and stack in runtime.g, deterministic mode's
// randomness), sync (sync.Pool per goroutine in deterministic mode),
// testing (instructions/op for every benchmark) and os/signal (how many
// subscriptions each signal went to, for the agent's signal watcher).
//
// # Releases
//
// A Release is a named patch set. Each has two parts:
//
//   - Go files that kprof adds to a patched package, kept as real Go
//     files under patches/<release>/<package>/ (embedded into kprof; a
//     "kprofpatch" build constraint keeps them out of kprof's own build,
//     and it is removed when they are added to the package they patch).
//     A release names its directories in order: a file found in an
//     earlier one overrides the same file of a later one, so a new release
//     lists only the files that changed.
//   - Same-line hook edits to the release's own files (each an exact old
//     text that must occur once and its replacement, keeping the line
//     count so that positions stay those of the source), listed in the
//     release's Go file (go126.go, go127.go).
//
// Every patch fails closed: a source file without the expected shape
// gives an error that names the file and the supported releases, never a
// silently different toolchain. Lookup is the registry from a go command's
// version to its release; adding a release is a Go file with its edits
// and a directory with the files that differ from the release it starts
// from.
package toolchain
