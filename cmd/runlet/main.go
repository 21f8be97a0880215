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

	"github.com/sirupsen/logrus"
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
	log := newLogger(o.LogLevel)
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

func newLogger(level string) *logrus.Entry {
	l := logrus.New()
	l.SetFormatter(&logrus.TextFormatter{FullTimestamp: true, TimestampFormat: "2006-01-02T15:04:05.000000Z07:00"})
	if lv, err := logrus.ParseLevel(level); err == nil { // checked with the flags
		l.SetLevel(lv)
	}
	return logrus.NewEntry(l)
}
