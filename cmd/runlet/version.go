package main

import (
	"fmt"
	"runtime/debug"
)

// version and commit are stamped at build time by `make build` and
// `make image` (-ldflags "-X main.version=… -X main.commit=…").
var (
	version = "v0.1.0-dev"
	commit  = ""
)

// buildCommit is the stamped commit, else the one the Go toolchain records
// when it builds inside a git checkout, so `go build` and `go run` binaries
// still say what they were built from.
func buildCommit() string {
	if commit != "" {
		return commit
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	rev, dirty := "", false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "unknown"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "-dirty"
	}
	return rev
}

// versionString is what `runlet --version` prints.
func versionString() string {
	return fmt.Sprintf("runlet %s (commit %s)", version, buildCommit())
}
