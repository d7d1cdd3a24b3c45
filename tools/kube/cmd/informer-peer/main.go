// Command informer-peer is the independent peer of the rbac-syncer's cold start in tools/bench: a
// client-go shared informer over every pod (as a Go operator would write it), keeping only what the
// syncer needs per pod, that reports when its cache has synced and which ServiceAccounts run a pod
// carrying the agent container. It binds nothing: "read every pod once" as client-go does it, which asks
// for protobuf (the syncer reads JSON; rbac-syncer-bench --list-floor times both encodings unread).
//
//	informer-peer --kubeconfig=<file> --agent-container=<name>
//
// Prints one JSON line once synced: {"syncedMs":…,"pods":…,"subjects":…,"peakRssBytes":…}.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
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
	subjects := map[string]struct{}{}
	items := informer.GetStore().List()
	for _, item := range items {
		if p, ok := item.(*corev1.Pod); ok && len(p.Spec.Containers) > 0 && p.DeletionTimestamp == nil {
			subjects[p.Namespace+"/"+p.Spec.ServiceAccountName] = struct{}{}
		}
	}
	out, _ := json.Marshal(map[string]int64{
		"syncedMs":     time.Since(started).Milliseconds(),
		"pods":         int64(len(items)),
		"subjects":     int64(len(subjects)),
		"peakRssBytes": peakRss(),
	})
	fmt.Println(string(out))
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
