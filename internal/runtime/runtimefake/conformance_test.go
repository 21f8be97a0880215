package runtimefake

import (
	"testing"

	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/runtimetest"
)

// TestConformance holds the fake to the suite every backend passes, so that
// the core's unit tests run against a backend that keeps the contract; what
// the fake does not do, its capabilities say.
func TestConformance(t *testing.T) {
	store := New()
	store.SetImages() // only the suite's loaded image is present
	runtimetest.Run(t, func(_ *testing.T, owner string) runtime.Runtime { return store.Reopen(owner) })
}
