package main

import (
	"strings"

	"github.com/runlet/runlet/internal/kubeletconfig"
)

// applyConfigFiles reads --config and --config-dir over the flag defaults,
// then parses the command line again over what the files set: flags given
// there win, as the kubelet's kubeletConfigFlagPrecedence makes them.
func (o *options) applyConfigFiles(args []string) error {
	if o.ConfigFile == "" && o.ConfigDir == "" {
		return nil
	}
	c, err := kubeletconfig.Load(o.ConfigFile, o.ConfigDir)
	if err != nil {
		return err
	}
	o.warnings = append(o.warnings, c.Warnings...)
	if u := c.Unhonoured(honouredFields()); len(u) > 0 {
		o.warnings = append(o.warnings, "KubeletConfiguration fields runlet does not honour: "+strings.Join(u, ", "))
	}
	for _, f := range configFields {
		if f.apply != nil && c.Has(f.name) {
			f.apply(o, c.KubeletConfiguration)
		}
	}
	// Defining the flags again resets o to their defaults: keep what the
	// files set, and let the second parse set only the flags given.
	fromFiles := *o
	fs := newFlagSet(o)
	*o = fromFiles
	return fs.Parse(args)
}

// honouredFields are the KubeletConfiguration fields runlet honours.
func honouredFields() []string {
	names := make([]string, 0, len(configFields))
	for _, f := range configFields {
		names = append(names, f.name)
	}
	return names
}
