package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/runlet/runlet/internal/nodeshutdown"
	"github.com/spf13/pflag"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
)

// shutdownOptions are graceful node shutdown's KubeletConfiguration
// fields. They have no flag, as on the kubelet: the configuration file
// sets them.
type shutdownOptions struct {
	ShutdownGracePeriod              time.Duration
	ShutdownGracePeriodCriticalPods  time.Duration
	ShutdownGracePeriodByPodPriority []kubeletv1beta1.ShutdownGracePeriodByPodPriority
}

// shutdownPeriods are the node shutdown's priority groups.
func (o *shutdownOptions) shutdownPeriods() []nodeshutdown.ByPodPriority {
	return nodeshutdown.Periods(o.ShutdownGracePeriod, o.ShutdownGracePeriodCriticalPods, o.ShutdownGracePeriodByPodPriority)
}

// shutdownMain is `runlet shutdown`: it tells the runlet of --root-dir
// that the host shuts down, and returns once the node's pods have stopped,
// for a shutdown script without systemd to run before it stops runlet.
func shutdownMain(args []string) int {
	fs := pflag.NewFlagSet("runlet shutdown", pflag.ContinueOnError)
	rootDir := fs.String("root-dir", "/var/lib/runlet", "--root-dir of the runlet whose node shuts down")
	timeout := fs.Duration("timeout", 0, "give up waiting after this long (the shutdown goes on); 0: wait until the pods have stopped")
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fmt.Printf("runlet shutdown stops the node's pods before the host shuts down, as the kubelet's graceful node shutdown,\n"+
				"and returns once they have stopped. Stop runlet afterwards as usual.\n\nUsage:\n  runlet shutdown [flags]\n\nFlags:\n%s", fs.FlagUsages())
			return 0
		}
		fmt.Fprintln(os.Stderr, "runlet shutdown:", err)
		return 2
	}
	if *timeout < 0 {
		fmt.Fprintf(os.Stderr, "runlet shutdown: --timeout must not be negative, not %s\n", *timeout)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if *timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *timeout)
		defer cancel()
	}
	msg, err := nodeshutdown.Request(ctx, *rootDir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "runlet shutdown:", err)
		return 1
	}
	fmt.Println(msg)
	return 0
}
