// Command jetstack-cainjector runs Jetstack cert-manager's cainjector reconciler for
// MutatingWebhookConfigurations (cert-manager.io/inject-ca-from), for the e2e on a bare API server.
// The release binary's main package lives in a nested module the module proxy does not serve.
package main

import (
	"flag"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	cmscheme "github.com/cert-manager/cert-manager/pkg/client/clientset/versioned/scheme"
	"github.com/cert-manager/cert-manager/pkg/controller/cainjector"
	"github.com/cert-manager/cert-manager/pkg/util"
)

func main() {
	// --kubeconfig is controller-runtime's own flag.
	flag.Parse()
	ctrl.SetLogger(klog.Background())
	config, err := ctrl.GetConfig()
	if err != nil {
		klog.Fatal(err)
	}
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, cmscheme.AddToScheme} {
		if err := add(scheme); err != nil {
			klog.Fatal(err)
		}
	}
	// As upstream: the user agent names the field manager of its caBundle writes (cert-manager-cainjector).
	mgr, err := ctrl.NewManager(util.RestConfigWithUserAgent(config, "cainjector"), ctrl.Options{
		Scheme:  scheme,
		Metrics: metricsserver.Options{BindAddress: "0"},
		// As upstream: Secrets are read directly, only their metadata is cached.
		Client: client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}}}},
	})
	if err != nil {
		klog.Fatal(err)
	}
	ctx := ctrl.SetupSignalHandler()
	if err := cainjector.RegisterAllInjectors(ctx, mgr, cainjector.SetupOptions{
		EnableCertificatesDataSource: true,
		EnabledReconcilersFor:        map[string]bool{cainjector.MutatingWebhookConfigurationName: true},
	}); err != nil {
		klog.Fatal(err)
	}
	klog.Info("jetstack-cainjector running")
	if err := mgr.Start(ctx); err != nil {
		klog.Fatal(err)
	}
}
