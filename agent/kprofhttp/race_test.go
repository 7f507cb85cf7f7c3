//go:build race

package kprofhttp

// raceEnabled: the test binary runs under the race detector.
const raceEnabled = true
