package main

import (
	"fmt"
	"maps"
	"time"

	"github.com/runlet/runlet/internal/eviction"
	"github.com/spf13/pflag"
	cliflag "k8s.io/component-base/cli/flag"
)

// addEvictionFlags are the kubelet's node pressure flags. --eviction-hard
// replaces the defaults as a whole, as on the kubelet (an empty value
// turns eviction off).
func addEvictionFlags(fs *pflag.FlagSet, o *options) {
	o.EvictionHard = maps.Clone(eviction.DefaultEvictionHard)
	fs.Var(cliflag.NewLangleSeparatedMapStringString(&o.EvictionHard), "eviction-hard",
		"eviction thresholds (e.g. memory.available<1Gi,nodefs.available<10%) that, when met, report node pressure and evict pods")
	fs.DurationVar(&o.EvictionPressureTransitionPeriod, "eviction-pressure-transition-period", eviction.DefaultPressureTransitionPeriod,
		"how long a pressure condition stays after its eviction threshold stopped being met")
}

// parseEviction checks the eviction flags and parses the thresholds.
func (o *options) parseEviction() error {
	t, err := eviction.ParseThresholdConfig(o.EvictionHard, nil, nil, nil)
	if err != nil {
		return fmt.Errorf("--eviction-hard: %w", err)
	}
	if o.EvictionPressureTransitionPeriod < 0 {
		return fmt.Errorf("--eviction-pressure-transition-period must not be negative: %v", o.EvictionPressureTransitionPeriod)
	}
	o.evictionThresholds = t
	return nil
}

// evictionOptions are the parsed node pressure settings.
type evictionOptions struct {
	EvictionHard                     map[string]string
	EvictionPressureTransitionPeriod time.Duration
	evictionThresholds               []eviction.Threshold
}
