// Package workloads holds kprof's evaluation programs, one command per
// subdirectory, modelled on the roles of the SPEC JVM98 suite used by the
// Komorium paper (section 7) plus Go-specific ones. Every program uses the
// standard library only, generates its input from a fixed-seed PRNG, takes a
// -n size flag and prints a single deterministic checksum line; see
// README.md for the list, sizes and timings.
//
// The package itself only carries the test that builds and runs them all.
package workloads
