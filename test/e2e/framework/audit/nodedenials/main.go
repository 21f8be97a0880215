// Command nodedenials prints what the apiserver refused a node agent's identity (runlet's, or with
// -agent kubelet the kubelet's), from the local control plane's audit logs in the directory it is given
// (CP_DIR/logs), and exits 1 when anything was refused.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/runlet/runlet/test/e2e/framework/audit"
)

func main() {
	agent := flag.String("agent", "runlet", "the node agent, by its user agent's first word: runlet or kubelet")
	flag.Usage = func() { fmt.Fprintln(os.Stderr, "usage: nodedenials [-agent runlet|kubelet] CP_DIR/logs") }
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	s, err := audit.Agent(flag.Arg(0), *agent)
	if err != nil {
		fmt.Fprintln(os.Stderr, "nodedenials:", err)
		os.Exit(2)
	}
	fmt.Printf("%s as a node: %d requests, %d refused, %d refused at first and then allowed\n", *agent, s.Requests, len(s.Denials), len(s.Transient))
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
