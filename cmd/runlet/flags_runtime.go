package main

import (
	"fmt"

	"github.com/spf13/pflag"
)

// Backends runlet can run pods on (--runtime).
const (
	runtimePodman = "podman"
	runtimeRunc   = "runc"
)

// runtimeOptions choose and tune the backend.
type runtimeOptions struct {
	// Runtime is the backend: podman or runc.
	Runtime string
	// ImageGCHighThreshold and ImageGCLowThreshold are the kubelet's image
	// GC thresholds, in percent of the image filesystem (runc backend).
	ImageGCHighThreshold, ImageGCLowThreshold int
}

func addRuntimeFlags(fs *pflag.FlagSet, o *runtimeOptions) {
	fs.StringVar(&o.Runtime, "runtime", runtimePodman, "container backend: podman (a podman service, see --podman-socket) or runc (runc and conmon on this host; images and containers under <root-dir>/runc)")
	fs.IntVar(&o.ImageGCHighThreshold, "image-gc-high-threshold", 85, "percent of the image filesystem in use above which unused images are removed (runc backend)")
	fs.IntVar(&o.ImageGCLowThreshold, "image-gc-low-threshold", 80, "percent of the image filesystem in use that image garbage collection frees down to (runc backend)")
}

func (o *runtimeOptions) validateRuntime() error {
	if o.Runtime != runtimePodman && o.Runtime != runtimeRunc {
		return fmt.Errorf("--runtime must be %s or %s, not %q", runtimePodman, runtimeRunc, o.Runtime)
	}
	if o.ImageGCHighThreshold < 0 || o.ImageGCHighThreshold > 100 {
		return fmt.Errorf("--image-gc-high-threshold must be between 0 and 100, not %d", o.ImageGCHighThreshold)
	}
	if o.ImageGCLowThreshold < 0 || o.ImageGCLowThreshold > o.ImageGCHighThreshold {
		return fmt.Errorf("--image-gc-low-threshold must be between 0 and --image-gc-high-threshold (%d), not %d", o.ImageGCHighThreshold, o.ImageGCLowThreshold)
	}
	return nil
}
