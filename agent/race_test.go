//go:build race

package agent

// raceEnabled: the test binary runs under the race detector.
const raceEnabled = true
