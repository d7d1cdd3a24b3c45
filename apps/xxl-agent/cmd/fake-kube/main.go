// Command fake-kube runs the fakekube test fixture for the Java compatibility driver: it writes
// token and ca.crt into the directory given as its argument and prints its URL on stdout.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"outrigger.dev/xxl-agent/internal/fakekube"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: fake-kube SERVICE_ACCOUNT_DIR TOKEN")
		os.Exit(2)
	}
	s, err := fakekube.Start(os.Args[1], os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake-kube:", err)
		os.Exit(1)
	}
	fmt.Println(s.URL)
	ctx := make(chan os.Signal, 1)
	signal.Notify(ctx, syscall.SIGTERM, syscall.SIGINT)
	<-ctx
	s.Close()
}
