package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/runlet/runlet/internal/runtime/runc/imagestore"
	"github.com/spf13/pflag"
)

// imageUsage is `runlet image --help`.
const imageUsage = `runlet image load loads the images of docker-archive or OCI-layout tarballs
(docker save, podman save, skopeo copy ... oci-archive:) into the runc backend's
image store, so that a host without a registry can run them. runlet must not
be running on the same --root-dir: it holds the store while it runs.

Usage:
  runlet image load [flags] FILE...

Flags:
%s`

// imageMain is `runlet image load FILE...`.
func imageMain(args []string) int {
	fs := pflag.NewFlagSet("runlet image", pflag.ContinueOnError)
	root := fs.String("root-dir", "/var/lib/runlet", "runlet's --root-dir")
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fmt.Printf(imageUsage, fs.FlagUsages())
			return 0
		}
		fmt.Fprintln(os.Stderr, "runlet image:", err)
		return 2
	}
	if fs.NArg() < 2 || fs.Arg(0) != "load" {
		fmt.Fprintln(os.Stderr, "runlet image: usage: runlet image load [--root-dir DIR] FILE... (runlet image --help)")
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := loadImages(ctx, filepath.Join(*root, "runc", "images"), fs.Args()[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "runlet image load:", err)
		return 1
	}
	return 0
}

func loadImages(ctx context.Context, storeDir string, files []string) error {
	store, err := imagestore.Open(storeDir, imagestore.Options{})
	if err != nil {
		return fmt.Errorf("%w (is runlet running on this --root-dir?)", err)
	}
	defer store.Close()
	for _, f := range files {
		names, err := store.Load(ctx, f)
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		for _, n := range names {
			fmt.Println("Loaded image:", n)
		}
	}
	return nil
}
