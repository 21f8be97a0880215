// Command runlet-pause is the process that holds a runc pod's namespaces,
// the kubelet's pause container, started by runlet's runc backend (package
// pause). It lies beside runlet's binary: a small program starts quicker
// and costs each pod less memory than runlet's own binary, which the
// backend runs in its stead where this one is missing.
package main

import (
	"fmt"
	"os"

	_ "github.com/runlet/runlet/internal/runtime/runc/pause/pauseproc"
)

func main() {
	// Started by runlet, it is taken over before main (argv[0] is
	// pauseproc.Arg0); by hand, it only says what it is.
	fmt.Fprintln(os.Stderr, "runlet-pause holds a runc pod's namespaces; runlet's runc backend starts it")
	os.Exit(2)
}
