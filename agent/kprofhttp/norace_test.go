//go:build !race

package kprofhttp

const raceEnabled = false
