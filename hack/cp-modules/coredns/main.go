// Command coredns is CoreDNS with only the plugins a cluster DNS needs, built by hack/coredns-build.sh
// into a local image (localhost/runlet/coredns:<version>) for the local control plane's DNS add-on.
//
// This is CoreDNS's documented way to choose a plugin set at compile time: import the plugins and set
// dnsserver.Directives (the order in which they handle a query), then call coremain.Run. The order below
// is CoreDNS's own (core/dnsserver/zdirectives.go of the pinned release) with the plugins left out
// that we do not build; a directive missing here makes CoreDNS reject a Corefile that uses it.
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/forward"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/hosts"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/loop"
	_ "github.com/coredns/coredns/plugin/metrics" // the "prometheus" directive; dnsserver links it anyway
	_ "github.com/coredns/coredns/plugin/ready"
	_ "github.com/coredns/coredns/plugin/reload"
)

func init() {
	dnsserver.Directives = []string{
		"reload",
		"bind",
		"ready",
		"health",
		"prometheus",
		"errors",
		"log",
		"loadbalance",
		"cache",
		"hosts",
		"kubernetes",
		"loop",
		"forward",
	}
}

func main() { coremain.Run() }
