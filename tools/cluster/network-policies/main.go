// Command network-policies enforces NetworkPolicy on the local cluster's node with the controller of
// sigs.k8s.io/kube-network-policies, run as a host process from a kubeconfig (upstream's own command
// reads only an in-cluster config). The controller gives each packet it reads from an nfqueue its
// verdict from the NetworkPolicies, Namespaces and Pods it watches. Its own nftables rules, which
// would fill that queue, need the kernel's nftables queue expression, which the local node's kernel
// lacks: it logs that they fail, and the harness's iptables chain (NFQUEUE) fills the queue instead.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/kube-network-policies/pkg/networkpolicy"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "the kubeconfig to watch NetworkPolicies, Namespaces and Pods with (required)")
	node := flag.String("node-name", "", "the node whose pods' traffic is filtered (required)")
	queue := flag.Int("nfqueue-id", 100, "the nfqueue that carries packets to this process")
	flag.Parse()
	if *kubeconfig == "" || *node == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: network-policies --kubeconfig FILE --node-name NAME [--nfqueue-id N]")
		os.Exit(2)
	}
	if err := run(*kubeconfig, *node, *queue); err != nil {
		fmt.Fprintf(os.Stderr, "network-policies: %v\n", err)
		os.Exit(1)
	}
}

func run(kubeconfig, node string, queue int) error {
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return fmt.Errorf("kubeconfig %s: %w", kubeconfig, err)
	}
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	factory := informers.NewSharedInformerFactory(client, 0)
	controller, err := networkpolicy.NewController(client,
		factory.Networking().V1().NetworkPolicies(), factory.Core().V1().Namespaces(), factory.Core().V1().Pods(),
		nil, nil, nil, nil,
		networkpolicy.Config{
			QueueID:  queue,
			NodeName: node,
			// NRI on: the node's containerd tells it a new pod's IP before the API server does (and with NRI off, v0.8.0 dereferences a nil plugin for an IP no pod holds).
			// Kernels from 6.12 have the conntrack fix that the DNS workaround is for.
			NetfilterBug1766Fix: false,
		})
	if err != nil {
		return err
	}
	factory.Start(ctx.Done())
	return controller.Run(ctx)
}
