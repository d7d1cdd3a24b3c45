// Command agnhost-webhook is agnhost's `webhook` subcommand alone (test/images/agnhost of the pinned
// k8s.io/kubernetes module): the Kubernetes e2e reference webhook, a peer in tools/bench. The whole
// agnhost binary would pull modules (sctp and others) that go.sum does not pin for the control plane.
//
//	agnhost-webhook --port=<port> --tls-cert-file=<file> --tls-private-key-file=<file> --sidecar-image=<image>
package main

import (
	"os"

	"k8s.io/kubernetes/test/images/agnhost/webhook"
)

func main() {
	if err := webhook.CmdWebhook.Execute(); err != nil {
		os.Exit(1)
	}
}
