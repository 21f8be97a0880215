package ocispec

import "testing"

// BenchmarkBuild: a spec is built on every container start, whose target
// is 120 ms at p50 for the whole pod.
func BenchmarkBuild(b *testing.B) {
	in := base()
	for b.Loop() {
		if _, err := Build(in); err != nil {
			b.Fatal(err)
		}
	}
}
