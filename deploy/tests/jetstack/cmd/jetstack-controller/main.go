// Command jetstack-controller runs Jetstack cert-manager's own controllers for Issuers and
// Certificates with the self-signed and CA issuers: what deploy/components/jetstack-cert-manager
// needs, for the e2e on a bare API server. The release binary's main package lives in a nested
// module that the module proxy does not serve, so this wires the same registered controllers.
package main

import (
	"context"
	"flag"
	"os"
	"os/signal"
	"syscall"
	"time"

	"k8s.io/klog/v2"

	controllerpkg "github.com/cert-manager/cert-manager/pkg/controller"
	logf "github.com/cert-manager/cert-manager/pkg/logs"

	// Each controller and issuer registers itself.
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/approver"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/ca"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/selfsigned"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/issuing"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/keymanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/readiness"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/requestmanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/revisionmanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/trigger"
	_ "github.com/cert-manager/cert-manager/pkg/controller/issuers"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/ca"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/selfsigned"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the API server")
	namespace := flag.String("namespace", "", "watch only this namespace (all if empty)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx = logf.NewContext(ctx, klog.Background())

	factory, err := controllerpkg.NewContextFactory(ctx, controllerpkg.ContextOptions{
		Kubeconfig: *kubeconfig,
		Namespace:  *namespace,
		// A failed request is retried within seconds, not the release's hour: this runs in tests.
		CertificateOptions: controllerpkg.CertificateOptions{
			CertificateRequestMinimumBackoffDuration: time.Second,
			CertificateRequestMaximumBackoffDuration: 10 * time.Second,
		},
	})
	if err != nil {
		klog.Fatal(err)
	}
	var controllers []controllerpkg.Interface
	for name, construct := range controllerpkg.Known() {
		c, err := construct(factory)
		if err != nil {
			klog.Fatalf("%s: %v", name, err)
		}
		controllers = append(controllers, c)
	}
	built, err := factory.Build()
	if err != nil {
		klog.Fatal(err)
	}
	built.KubeSharedInformerFactory.Start(ctx.Done())
	built.SharedInformerFactory.Start(ctx.Done())
	for _, c := range controllers {
		go func() {
			if err := c.Run(2, ctx); err != nil {
				klog.Fatal(err)
			}
		}()
	}
	klog.Info("jetstack-controller running")
	<-ctx.Done()
}
