//go:build !race

package main

// raceEnabled is true when the tests run with the race detector, which
// makes the demo several times slower.
const raceEnabled = false
