// Command nodedenials prints what the apiserver refused runlet's node identity, from the local control
// plane's audit logs in the directory it is given (CP_DIR/logs), and exits 1 when anything was refused.
package main

import (
	"fmt"
	"os"

	"github.com/runlet/runlet/test/e2e/framework/audit"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: nodedenials CP_DIR/logs")
		os.Exit(2)
	}
	s, err := audit.Runlet(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "nodedenials:", err)
		os.Exit(2)
	}
	fmt.Printf("runlet as a node: %d requests, %d refused, %d refused at first and then allowed\n", s.Requests, len(s.Denials), len(s.Transient))
	for _, d := range s.Denials {
		fmt.Println("  refused:", d)
	}
	for _, d := range s.Transient {
		fmt.Println("  refused, then allowed:", d)
	}
	if len(s.Denials) > 0 {
		os.Exit(1)
	}
}
