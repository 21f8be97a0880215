package main

import (
	"os"
	"runtime/debug"
)

// defaultGCPercent is runlet's GOGC when the environment sets none. Its
// live heap is small (about 9 MiB with 100 pods, `make bench`), and Go's
// default of 100 lets the heap grow to twice that between collections: on
// every node, and on small edge boxes, half of that headroom is enough.
// runlet allocates little at rest, so the extra collections cost little.
const defaultGCPercent = 50

// setGCPercent applies defaultGCPercent unless GOGC is set.
func setGCPercent() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(defaultGCPercent)
	}
}
