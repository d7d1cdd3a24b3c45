// Command informer-peer is the independent peer of the rbac-syncer's cold start in tools/bench: a
// client-go shared informer over every pod (as a Go operator would write it), keeping only what the
// syncer needs per pod, that reports when its cache has synced and which ServiceAccounts run a pod
// carrying the agent container; client-go asks for protobuf, as the syncer does. Then, as the syncer does
// from nothing, it creates one ClusterRoleBinding per namespace for those ServiceAccounts (16 in flight,
// the syncer's own width), labelled `outrigger.dev/bench-peer`, to an empty ClusterRole of its own; it
// neither verifies the agent container nor watches its writes, so it is a floor for the syncer's work.
//
//	informer-peer --kubeconfig=<file> --agent-container=<name>
//
// Prints one JSON line once bound: {"syncedMs":…,"boundMs":…,"pods":…,"subjects":…,"bindings":…,"peakRssBytes":…}.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	started := time.Now()
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig file")
	agent := flag.String("agent-container", "xxl-agent", "the agent container's name")
	flag.Parse()
	config, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fail(err)
	}
	config.QPS, config.Burst = 1000, 1000
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		fail(err)
	}
	slim := func(obj any) (any, error) {
		pod, ok := obj.(*corev1.Pod)
		if !ok {
			return obj, nil
		}
		// What the informer keeps of a pod (the store keys it by its metadata); the rest is dropped on arrival.
		slim := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID, ResourceVersion: pod.ResourceVersion, DeletionTimestamp: pod.DeletionTimestamp}}
		slim.Spec.ServiceAccountName = pod.Spec.ServiceAccountName
		for _, c := range append(pod.Spec.Containers, pod.Spec.InitContainers...) {
			if c.Name == *agent {
				slim.Spec.Containers = []corev1.Container{{Name: c.Name}}
			}
		}
		return slim, nil
	}
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTransform(slim))
	informer := factory.Core().V1().Pods().Informer()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		fail(fmt.Errorf("the pod cache never synced"))
	}
	synced := time.Since(started)
	// The ServiceAccounts carrying the agent, per namespace.
	byNamespace := map[string]map[string]struct{}{}
	subjects := 0
	items := informer.GetStore().List()
	for _, item := range items {
		if p, ok := item.(*corev1.Pod); ok && len(p.Spec.Containers) > 0 && p.DeletionTimestamp == nil {
			accounts := byNamespace[p.Namespace]
			if accounts == nil {
				accounts = map[string]struct{}{}
				byNamespace[p.Namespace] = accounts
			}
			if _, seen := accounts[p.Spec.ServiceAccountName]; !seen {
				accounts[p.Spec.ServiceAccountName] = struct{}{}
				subjects++
			}
		}
	}
	bindings, err := bind(ctx, client, byNamespace)
	if err != nil {
		fail(err)
	}
	out, _ := json.Marshal(map[string]int64{
		"syncedMs":     synced.Milliseconds(),
		"boundMs":      time.Since(started).Milliseconds(),
		"pods":         int64(len(items)),
		"subjects":     int64(subjects),
		"bindings":     int64(bindings),
		"peakRssBytes": peakRss(),
	})
	fmt.Println(string(out))
}

// bind creates the peer's ClusterRole and one ClusterRoleBinding per namespace, 16 at a time; returns how many bindings.
func bind(ctx context.Context, client kubernetes.Interface, byNamespace map[string]map[string]struct{}) (int, error) {
	labels := map[string]string{"outrigger.dev/bench-peer": "true"}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "informer-peer", Labels: labels}}
	if _, err := client.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return 0, err
	}
	work := make(chan *rbacv1.ClusterRoleBinding)
	errs := make(chan error, 1)
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range work {
				if _, err := client.RbacV1().ClusterRoleBindings().Create(ctx, b, metav1.CreateOptions{}); err != nil {
					select {
					case errs <- fmt.Errorf("creating ClusterRoleBinding %s: %w", b.Name, err):
					default:
					}
				}
			}
		}()
	}
	for namespace, accounts := range byNamespace {
		names := make([]string, 0, len(accounts))
		for name := range accounts {
			names = append(names, name)
		}
		sort.Strings(names)
		b := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "informer-peer-" + namespace, Labels: labels},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		}
		for _, name := range names {
			b.Subjects = append(b.Subjects, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: namespace})
		}
		work <- b
	}
	close(work)
	wg.Wait()
	select {
	case err := <-errs:
		return 0, err
	default:
		return len(byNamespace), nil
	}
}

// peakRss reads VmHWM, the resident set's high-water mark, from /proc/self/status.
func peakRss() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return -1
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb * 1024
		}
	}
	return -1
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "informer-peer:", err)
	os.Exit(1)
}
