package main

import (
	"strings"
	"testing"
	"time"
)

// TestEvictionFlags: the kubelet's defaults, a value that replaces them as
// a whole, an empty value that turns eviction off, and bad values refused.
func TestEvictionFlags(t *testing.T) {
	o, err := parseFlags([]string{"--nodename", "n"})
	if err != nil {
		t.Fatal(err)
	}
	if len(o.evictionThresholds) != 5 || o.EvictionPressureTransitionPeriod != 5*time.Minute {
		t.Errorf("defaults: %d thresholds, transition %v", len(o.evictionThresholds), o.EvictionPressureTransitionPeriod)
	}
	o, err = parseFlags([]string{"--nodename", "n", "--eviction-hard", "nodefs.available<5%,pid.available<1000", "--eviction-pressure-transition-period", "30s"})
	if err != nil {
		t.Fatal(err)
	}
	if len(o.evictionThresholds) != 2 || o.EvictionPressureTransitionPeriod != 30*time.Second {
		t.Errorf("set: %v, %v", o.evictionThresholds, o.EvictionPressureTransitionPeriod)
	}
	o, err = parseFlags([]string{"--nodename", "n", "--eviction-hard="})
	if err != nil || len(o.evictionThresholds) != 0 {
		t.Errorf("empty: %v, %v", o.evictionThresholds, err)
	}
	for _, bad := range []string{"mem.available<1Gi", "memory.available<-1Gi", "nodefs.available<150%", "memory.available=1Gi"} {
		if _, err := parseFlags([]string{"--nodename", "n", "--eviction-hard", bad}); err == nil || !strings.Contains(err.Error(), "eviction-hard") {
			t.Errorf("%q: %v; want an error naming --eviction-hard", bad, err)
		}
	}
	if _, err := parseFlags([]string{"--nodename", "n", "--eviction-pressure-transition-period", "-1s"}); err == nil {
		t.Error("a negative transition period was accepted")
	}
}
