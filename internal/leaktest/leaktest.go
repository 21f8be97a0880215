// Package leaktest makes a package's tests fail when they leave goroutines
// behind (go.uber.org/goleak). Use it from the package's TestMain:
//
//	func TestMain(m *testing.M) { leaktest.Main(m) }
package leaktest

import (
	"testing"

	"go.uber.org/goleak"
)

// processWide are goroutines libraries start once for the life of the
// process, whatever the test does.
var processWide = []goleak.Option{
	goleak.IgnoreTopFunction("k8s.io/klog/v2.(*flushDaemon).run.func1"),
	// virtual-kubelet pulls in opencensus, whose stats worker starts at init.
	goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start"),
}

// Main runs the tests, then fails if goroutines other than the process-wide
// ones are still running.
func Main(m *testing.M, opts ...goleak.Option) {
	goleak.VerifyTestMain(m, append(processWide, opts...)...)
}
