// Command runlet registers a virtual node and runs the pods scheduled to it
// on a local podman or runc.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/runlet/runlet/internal/logging"
)

func main() {
	setGCPercent()
	if len(os.Args) > 1 && os.Args[1] == "uninstall" {
		os.Exit(uninstallMain(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == "image" {
		os.Exit(imageMain(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == "join" {
		os.Exit(joinMain(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == "shutdown" {
		os.Exit(shutdownMain(os.Args[2:]))
	}
	o, err := parseFlags(os.Args[1:])
	var help helpRequested
	if errors.As(err, &help) {
		help.print(os.Stdout)
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "runlet:", err)
		os.Exit(2)
	}
	if o.ShowVersion {
		fmt.Println(versionString())
		return
	}
	log, err := logging.New(o.LogLevel, o.LoggingFormat, os.Stderr)
	if err != nil { // checked with the flags
		fmt.Fprintln(os.Stderr, "runlet:", err)
		os.Exit(2)
	}
	for _, w := range o.warnings {
		log.Warn(w)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := run(ctx, o, log); err != nil {
		log.WithError(err).Error("runlet stopped")
		os.Exit(1)
	}
	log.Info("runlet stopped cleanly; pods keep running")
}
