/*
Copyright 2016 The Kubernetes Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Cases ported from k8s.io/kubernetes v1.37.2
// pkg/kubelet/eviction/helpers_test.go (TestParseThresholdConfig,
// TestThresholdsMet, TestPercentageThresholdsMet,
// TestNodeConditionsObservedSince), without the allocatable thresholds runlet
// does not add.

package eviction

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

func TestParseThresholdConfig(t *testing.T) {
	gracePeriod := 30 * time.Second
	memHard := Threshold{Signal: SignalMemoryAvailable, Operator: OpLessThan, Value: ThresholdValue{Quantity: quantityMustParse("150Mi")}, MinReclaim: &ThresholdValue{Quantity: quantityMustParse("0")}}
	memSoft := Threshold{Signal: SignalMemoryAvailable, Operator: OpLessThan, Value: ThresholdValue{Quantity: quantityMustParse("300Mi")}, GracePeriod: gracePeriod, MinReclaim: &ThresholdValue{Quantity: quantityMustParse("0")}}
	testCases := map[string]struct {
		evictionHard, evictionSoft, evictionSoftGracePeriod, evictionMinReclaim map[string]string
		expectErr                                                               bool
		expectThresholds                                                        []Threshold
	}{
		"no values": {expectThresholds: []Threshold{}},
		"all memory eviction values": {
			evictionHard:            map[string]string{"memory.available": "150Mi"},
			evictionSoft:            map[string]string{"memory.available": "300Mi"},
			evictionSoftGracePeriod: map[string]string{"memory.available": "30s"},
			evictionMinReclaim:      map[string]string{"memory.available": "0"},
			expectThresholds:        []Threshold{memHard, memSoft},
		},
		"all memory eviction values in percentages": {
			evictionHard:            map[string]string{"memory.available": "10%"},
			evictionSoft:            map[string]string{"memory.available": "30%"},
			evictionSoftGracePeriod: map[string]string{"memory.available": "30s"},
			evictionMinReclaim:      map[string]string{"memory.available": "5%"},
			expectThresholds: []Threshold{
				{Signal: SignalMemoryAvailable, Operator: OpLessThan, Value: ThresholdValue{Percentage: 0.1}, MinReclaim: &ThresholdValue{Percentage: 0.05}},
				{Signal: SignalMemoryAvailable, Operator: OpLessThan, Value: ThresholdValue{Percentage: 0.3}, GracePeriod: gracePeriod, MinReclaim: &ThresholdValue{Percentage: 0.05}},
			},
		},
		"disk eviction values": {
			evictionHard:            map[string]string{"imagefs.available": "150Mi", "nodefs.available": "100Mi"},
			evictionSoft:            map[string]string{"imagefs.available": "300Mi", "nodefs.available": "200Mi"},
			evictionSoftGracePeriod: map[string]string{"imagefs.available": "30s", "nodefs.available": "30s"},
			evictionMinReclaim:      map[string]string{"imagefs.available": "2Gi", "nodefs.available": "1Gi"},
			expectThresholds: []Threshold{
				{Signal: SignalImageFsAvailable, Operator: OpLessThan, Value: ThresholdValue{Quantity: quantityMustParse("150Mi")}, MinReclaim: &ThresholdValue{Quantity: quantityMustParse("2Gi")}},
				{Signal: SignalNodeFsAvailable, Operator: OpLessThan, Value: ThresholdValue{Quantity: quantityMustParse("100Mi")}, MinReclaim: &ThresholdValue{Quantity: quantityMustParse("1Gi")}},
				{Signal: SignalImageFsAvailable, Operator: OpLessThan, Value: ThresholdValue{Quantity: quantityMustParse("300Mi")}, GracePeriod: gracePeriod, MinReclaim: &ThresholdValue{Quantity: quantityMustParse("2Gi")}},
				{Signal: SignalNodeFsAvailable, Operator: OpLessThan, Value: ThresholdValue{Quantity: quantityMustParse("200Mi")}, GracePeriod: gracePeriod, MinReclaim: &ThresholdValue{Quantity: quantityMustParse("1Gi")}},
			},
		},
		"disk eviction values in percentages": {
			evictionHard:            map[string]string{"imagefs.available": "15%", "nodefs.available": "10.5%"},
			evictionSoft:            map[string]string{"imagefs.available": "30%", "nodefs.available": "20.5%"},
			evictionSoftGracePeriod: map[string]string{"imagefs.available": "30s", "nodefs.available": "30s"},
			evictionMinReclaim:      map[string]string{"imagefs.available": "10%", "nodefs.available": "5%"},
			expectThresholds: []Threshold{
				{Signal: SignalImageFsAvailable, Operator: OpLessThan, Value: ThresholdValue{Percentage: 0.15}, MinReclaim: &ThresholdValue{Percentage: 0.1}},
				{Signal: SignalNodeFsAvailable, Operator: OpLessThan, Value: ThresholdValue{Percentage: 0.105}, MinReclaim: &ThresholdValue{Percentage: 0.05}},
				{Signal: SignalImageFsAvailable, Operator: OpLessThan, Value: ThresholdValue{Percentage: 0.3}, GracePeriod: gracePeriod, MinReclaim: &ThresholdValue{Percentage: 0.1}},
				{Signal: SignalNodeFsAvailable, Operator: OpLessThan, Value: ThresholdValue{Percentage: 0.205}, GracePeriod: gracePeriod, MinReclaim: &ThresholdValue{Percentage: 0.05}},
			},
		},
		"inode eviction values": {
			evictionHard:            map[string]string{"imagefs.inodesFree": "150Mi", "nodefs.inodesFree": "100Mi"},
			evictionSoft:            map[string]string{"imagefs.inodesFree": "300Mi", "nodefs.inodesFree": "200Mi"},
			evictionSoftGracePeriod: map[string]string{"imagefs.inodesFree": "30s", "nodefs.inodesFree": "30s"},
			evictionMinReclaim:      map[string]string{"imagefs.inodesFree": "2Gi", "nodefs.inodesFree": "1Gi"},
			expectThresholds: []Threshold{
				{Signal: SignalImageFsInodesFree, Operator: OpLessThan, Value: ThresholdValue{Quantity: quantityMustParse("150Mi")}, MinReclaim: &ThresholdValue{Quantity: quantityMustParse("2Gi")}},
				{Signal: SignalNodeFsInodesFree, Operator: OpLessThan, Value: ThresholdValue{Quantity: quantityMustParse("100Mi")}, MinReclaim: &ThresholdValue{Quantity: quantityMustParse("1Gi")}},
				{Signal: SignalImageFsInodesFree, Operator: OpLessThan, Value: ThresholdValue{Quantity: quantityMustParse("300Mi")}, GracePeriod: gracePeriod, MinReclaim: &ThresholdValue{Quantity: quantityMustParse("2Gi")}},
				{Signal: SignalNodeFsInodesFree, Operator: OpLessThan, Value: ThresholdValue{Quantity: quantityMustParse("200Mi")}, GracePeriod: gracePeriod, MinReclaim: &ThresholdValue{Quantity: quantityMustParse("1Gi")}},
			},
		},
		"disable via 0%":                  {evictionHard: map[string]string{"memory.available": "0%"}, evictionSoft: map[string]string{"memory.available": "0%"}, expectThresholds: []Threshold{}},
		"disable via 100%":                {evictionHard: map[string]string{"memory.available": "100%"}, evictionSoft: map[string]string{"memory.available": "100%"}, expectThresholds: []Threshold{}},
		"pid":                             {evictionHard: map[string]string{"pid.available": "10%"}, expectThresholds: []Threshold{{Signal: SignalPIDAvailable, Operator: OpLessThan, Value: ThresholdValue{Percentage: 0.1}}}},
		"invalid-signal":                  {evictionHard: map[string]string{"mem.available": "150Mi"}, expectErr: true},
		"hard-signal-negative":            {evictionHard: map[string]string{"memory.available": "-150Mi"}, expectErr: true},
		"hard-signal-negative-percentage": {evictionHard: map[string]string{"memory.available": "-15%"}, expectErr: true},
		"hard-signal-percentage-greater-than-100%": {evictionHard: map[string]string{"memory.available": "150%"}, expectErr: true},
		"soft-signal-negative":                     {evictionSoft: map[string]string{"memory.available": "-150Mi"}, expectErr: true},
		"valid-and-invalid-signal":                 {evictionHard: map[string]string{"memory.available": "150Mi", "invalid.foo": "150Mi"}, expectErr: true},
		"soft-no-grace-period":                     {evictionSoft: map[string]string{"memory.available": "150Mi"}, expectErr: true},
		"soft-negative-grace-period":               {evictionSoft: map[string]string{"memory.available": "150Mi"}, evictionSoftGracePeriod: map[string]string{"memory.available": "-30s"}, expectErr: true},
		"negative-reclaim":                         {evictionMinReclaim: map[string]string{"memory.available": "-300Mi"}, expectErr: true},
		"min-reclaim-invalid-signal":               {evictionMinReclaim: map[string]string{"mem.available": "300Mi"}, expectErr: true},
		"min-reclaim-empty-value":                  {evictionMinReclaim: map[string]string{"memory.available": ""}, expectErr: true},
		"min-reclaim-negative-percentage":          {evictionMinReclaim: map[string]string{"memory.available": "-15%"}, expectErr: true},
		"min-reclaim-invalid-percentage":           {evictionMinReclaim: map[string]string{"memory.available": "10..5%"}, expectErr: true},
		"hard-signal-empty-eviction-value":         {evictionHard: map[string]string{"memory.available": ""}, expectErr: true},
		"hard-signal-invalid-float-percentage":     {evictionHard: map[string]string{"memory.available": "10..5%"}, expectErr: true},
		"soft-grace-period-invalid-signal":         {evictionSoft: map[string]string{"memory.available": "150Mi"}, evictionSoftGracePeriod: map[string]string{"mem.available": "30s"}, expectErr: true},
		"soft-invalid-grace-period":                {evictionSoft: map[string]string{"memory.available": "150Mi"}, evictionSoftGracePeriod: map[string]string{"memory.available": "30mins"}, expectErr: true},
	}
	for name, tc := range testCases {
		thresholds, err := ParseThresholdConfig(tc.evictionHard, tc.evictionSoft, tc.evictionSoftGracePeriod, tc.evictionMinReclaim)
		if tc.expectErr != (err != nil) {
			t.Errorf("%s: error %v; want an error: %v", name, err, tc.expectErr)
		}
		if !thresholdsEqual(tc.expectThresholds, thresholds) {
			t.Errorf("%s: thresholds %v; want %v", name, thresholds, tc.expectThresholds)
		}
	}
}

// TestParseDefaultEvictionHard: the kubelet's Linux defaults parse into
// five hard thresholds, and containerfs ones are dropped by the manager.
func TestParseDefaultEvictionHard(t *testing.T) {
	got, err := ParseThresholdConfig(DefaultEvictionHard, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []Threshold{
		{Signal: SignalMemoryAvailable, Operator: OpLessThan, Value: ThresholdValue{Quantity: quantityMustParse("100Mi")}},
		{Signal: SignalNodeFsAvailable, Operator: OpLessThan, Value: ThresholdValue{Percentage: 0.1}},
		{Signal: SignalNodeFsInodesFree, Operator: OpLessThan, Value: ThresholdValue{Percentage: 0.05}},
		{Signal: SignalImageFsAvailable, Operator: OpLessThan, Value: ThresholdValue{Percentage: 0.15}},
		{Signal: SignalImageFsInodesFree, Operator: OpLessThan, Value: ThresholdValue{Percentage: 0.05}},
	}
	if !thresholdsEqual(want, got) {
		t.Errorf("defaults parse to %v; want %v", got, want)
	}
	withContainerFs, _ := ParseThresholdConfig(map[string]string{"containerfs.available": "10%", "nodefs.available": "10%"}, nil, nil, nil)
	kept, dropped := ignoreContainerFs(withContainerFs)
	if len(kept) != 1 || kept[0].Signal != SignalNodeFsAvailable || len(dropped) != 1 {
		t.Errorf("kept %v, dropped %v; want containerfs dropped", kept, dropped)
	}
}

func TestThresholdsMet(t *testing.T) {
	hardThreshold := Threshold{
		Signal:     SignalMemoryAvailable,
		Operator:   OpLessThan,
		Value:      ThresholdValue{Quantity: quantityMustParse("1Gi")},
		MinReclaim: &ThresholdValue{Quantity: quantityMustParse("500Mi")},
	}
	testCases := map[string]struct {
		enforceMinReclaim bool
		thresholds        []Threshold
		observations      signalObservations
		result            []Threshold
	}{
		"empty":                              {thresholds: []Threshold{}, observations: signalObservations{}, result: []Threshold{}},
		"threshold-met-memory":               {thresholds: []Threshold{hardThreshold}, observations: signalObservations{SignalMemoryAvailable: {available: quantityMustParse("500Mi")}}, result: []Threshold{hardThreshold}},
		"threshold-not-met":                  {thresholds: []Threshold{hardThreshold}, observations: signalObservations{SignalMemoryAvailable: {available: quantityMustParse("2Gi")}}, result: []Threshold{}},
		"threshold-met-with-min-reclaim":     {enforceMinReclaim: true, thresholds: []Threshold{hardThreshold}, observations: signalObservations{SignalMemoryAvailable: {available: quantityMustParse("1.05Gi")}}, result: []Threshold{hardThreshold}},
		"threshold-not-met-with-min-reclaim": {enforceMinReclaim: true, thresholds: []Threshold{hardThreshold}, observations: signalObservations{SignalMemoryAvailable: {available: quantityMustParse("2Gi")}}, result: []Threshold{}},
		"no-observation":                     {thresholds: []Threshold{hardThreshold}, observations: signalObservations{}, result: []Threshold{}},
	}
	for name, tc := range testCases {
		actual := thresholdsMet(tc.thresholds, tc.observations, tc.enforceMinReclaim)
		if !thresholdsEqual(tc.result, actual) {
			t.Errorf("%s: %v; want %v", name, actual, tc.result)
		}
	}
}

func TestPercentageThresholdsMet(t *testing.T) {
	specific := []Threshold{
		{Signal: SignalMemoryAvailable, Operator: OpLessThan, Value: ThresholdValue{Percentage: 0.2}, MinReclaim: &ThresholdValue{Percentage: 0.05}},
		{Signal: SignalNodeFsAvailable, Operator: OpLessThan, Value: ThresholdValue{Percentage: 0.3}},
	}
	obs := func(mem, memCap, fs, fsCap string) signalObservations {
		o := signalObservations{SignalMemoryAvailable: {available: quantityMustParse(mem), capacity: quantityMustParse(memCap)}}
		if fs != "" {
			o[SignalNodeFsAvailable] = signalObservation{available: quantityMustParse(fs), capacity: quantityMustParse(fsCap)}
		}
		return o
	}
	testCases := map[string]struct {
		enforceMinReclaim bool
		observations      signalObservations
		result            []Threshold
	}{
		"BothMet":                    {observations: obs("100Mi", "1000Mi", "100Gi", "1000Gi"), result: specific},
		"NoneMet":                    {observations: obs("300Mi", "1000Mi", "400Gi", "1000Gi"), result: []Threshold{}},
		"DiskMet":                    {observations: obs("300Mi", "1000Mi", "100Gi", "1000Gi"), result: []Threshold{specific[1]}},
		"MemoryMet":                  {observations: obs("100Mi", "1000Mi", "400Gi", "1000Gi"), result: []Threshold{specific[0]}},
		"MemoryMetWithMinReclaim":    {enforceMinReclaim: true, observations: obs("225Mi", "1000Mi", "", ""), result: []Threshold{specific[0]}},
		"MemoryNotMetWithMinReclaim": {enforceMinReclaim: true, observations: obs("300Mi", "1000Mi", "", ""), result: []Threshold{}},
	}
	for name, tc := range testCases {
		actual := thresholdsMet(specific, tc.observations, tc.enforceMinReclaim)
		if !thresholdsEqual(tc.result, actual) {
			t.Errorf("%s: %v; want %v", name, actual, tc.result)
		}
	}
}

func TestNodeConditionsObservedSince(t *testing.T) {
	now := time.Now()
	testCases := map[string]struct {
		observedAt nodeConditionsObservedAt
		period     time.Duration
		now        time.Time
		result     []v1.NodeConditionType
	}{
		"in-period":     {observedAt: nodeConditionsObservedAt{v1.NodeMemoryPressure: now}, period: time.Minute, now: now, result: []v1.NodeConditionType{v1.NodeMemoryPressure}},
		"out-of-period": {observedAt: nodeConditionsObservedAt{v1.NodeMemoryPressure: now}, period: time.Minute, now: now.Add(30 * time.Minute), result: []v1.NodeConditionType{}},
	}
	for name, tc := range testCases {
		actual := nodeConditionsObservedSince(tc.observedAt, tc.period, tc.now)
		if !sameConditions(actual, tc.result) {
			t.Errorf("%s: %v; want %v", name, actual, tc.result)
		}
	}
}

func TestHardEvictionReservation(t *testing.T) {
	thresholds, _ := ParseThresholdConfig(DefaultEvictionHard, nil, nil, nil)
	capacity := v1.ResourceList{v1.ResourceMemory: *quantityMustParse("4Gi"), v1.ResourceEphemeralStorage: *quantityMustParse("100Gi")}
	got := HardEvictionReservation(thresholds, capacity)
	if m := got[v1.ResourceMemory]; m.Cmp(*quantityMustParse("100Mi")) != 0 {
		t.Errorf("memory reserved %v; want 100Mi", m.String())
	}
	if s := got[v1.ResourceEphemeralStorage]; s.Value() != int64(float64(100<<30)*float64(float32(0.1))) {
		t.Errorf("ephemeral-storage reserved %v; want 10%% of 100Gi", s.String())
	}
	if len(got) != 2 {
		t.Errorf("reserved %v; want memory and ephemeral-storage only", got)
	}
}
