// Package toolexec is kprof's -toolexec driver: the go-command protocol
// between kprof build (which writes a Config) and every tool invocation of
// the go build it runs. A compile step of an instrumented package is
// type-checked against its importcfg and handed to package rewrite; the
// compile steps of runtime, sync and testing get the patches of package
// toolchain for the go command's release; the other tools pass through,
// with kprof's identity appended to their -V=full answers so that the build
// cache keeps instrumented and plain builds apart. Facts that importers
// plan with (a package's quiet functions, facts.go) travel in the
// package's archive.
package toolexec
