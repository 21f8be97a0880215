package main

import (
	"os"
	"runtime/debug"
	"testing"
)

func TestGCPercent(t *testing.T) {
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)

	t.Setenv("GOGC", "80")
	setGCPercent()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("with GOGC set, the GC percent became %d; want it left alone", got)
	}
	if err := os.Unsetenv("GOGC"); err != nil {
		t.Fatal(err)
	}
	setGCPercent()
	if got := debug.SetGCPercent(100); got != defaultGCPercent {
		t.Errorf("without GOGC the GC percent is %d; want %d", got, defaultGCPercent)
	}
}
