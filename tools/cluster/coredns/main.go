// Command coredns is the local cluster's DNS: CoreDNS with only the plugins a cluster DNS needs.
// It has no forwarding plugin, so it answers the cluster's zones from the API and nothing else
// (the rest get SERVFAIL). No reload or loop either: the Corefile is fixed and nothing forwards.
package main

import (
	"github.com/coredns/coredns/coremain"

	// The server and the plugins the Corefile may use; each registers itself.
	_ "github.com/coredns/coredns/core/dnsserver"
	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/ready"
)

func main() { coremain.Run() }
