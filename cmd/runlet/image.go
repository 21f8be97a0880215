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
image store, so that a host without a registry can run them. A runlet running
on the same --root-dir takes the images through its store's socket; otherwise
the store is opened directly.

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
	load, done, err := imageLoader(ctx, storeDir)
	if err != nil {
		return err
	}
	defer done()
	for _, f := range files {
		names, err := load(f)
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		for _, n := range names {
			fmt.Println("Loaded image:", n)
		}
	}
	return nil
}

// imageLoader loads through the socket of the runlet that holds the store,
// else into the store opened here.
func imageLoader(ctx context.Context, storeDir string) (load func(string) ([]string, error), done func(), err error) {
	if imagestore.Serving(storeDir) {
		return func(f string) ([]string, error) { return imagestore.LoadThrough(ctx, storeDir, f) }, func() {}, nil
	}
	store, err := imagestore.Open(storeDir, imagestore.Options{})
	if err != nil {
		return nil, nil, err
	}
	return func(f string) ([]string, error) { return store.Load(ctx, f) }, func() { _ = store.Close() }, nil
}
