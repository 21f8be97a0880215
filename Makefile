# runlet — see README.md. Everything runs as root on Debian 12 / Ubuntu; hack/install-deps.sh installs
# what is missing. The control plane is built once into ~/.cache/runlet (RUNLET_CACHE).
SHELL := /bin/bash
export PATH := /usr/local/go/bin:$(PATH)
GO ?= go
STATICCHECK_VERSION ?= v0.8.2
E2E_TIMEOUT ?= 40m
# unit tests: every package but the end-to-end ones
UNIT_PKGS = $(shell $(GO) list ./... | grep -v '/test/e2e')
# stamped into the binary (runlet --version) and the image: the chart's appVersion and the git commit
VERSION ?= $(shell awk -F'"' '/^appVersion:/ {print $$2}' charts/runlet/Chart.yaml)
COMMIT ?= $(shell git rev-parse --short=12 HEAD 2>/dev/null)$(shell git diff --quiet HEAD 2>/dev/null || echo -dirty)
LDFLAGS = -X main.version=$(VERSION) -X main.commit=$(COMMIT)

.PHONY: all build image manifests run stop test test-unit test-e2e test-e2e-runc deps cp kubelet bench soak chaos scale conformance lint clean

all: build

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/ ./cmd/runlet ./cmd/runlet-pause

## image: the runlet image, with podman and no registry (hack/image.sh; IMAGE, BASE_IMAGE to change)
image:
	VERSION=$(VERSION) COMMIT=$(COMMIT) bash hack/image.sh

## manifests: deploy/runlet.yaml, rendered from the chart (hack/manifests.sh)
manifests: cp
	bash hack/manifests.sh > deploy/runlet.yaml

## run: deps, build, control plane, podman and a runlet node, left running (stop: make stop)
run:
	bash hack/run.sh

stop:
	bash hack/stop.sh

## deps: Debian packages + the local test images; cp: the control-plane binaries (cached)
deps:
	bash hack/install-deps.sh
	bash hack/images.sh

cp:
	bash hack/cp-build.sh >/dev/null

test: deps cp test-unit test-e2e test-e2e-runc

test-unit: deps
	$(GO) test -count=1 $(UNIT_PKGS)

# -p 1: one test package at a time (each starts its own control plane; they share podman). Within the
# package the tests that stop shared parts (podman, the apiserver) run alone first, then the others three
# at a time (-parallel 3): they mostly wait on grace periods and probes.
test-e2e: deps cp
	$(GO) test -count=1 -p 1 -parallel 3 -timeout $(E2E_TIMEOUT) ./test/e2e/...

# test-e2e-runc: the backend matrix's second column: the end-to-end tests again with every runlet on the
# runc backend. Their checks speak Kubernetes, or ask the backend through the framework (Sandboxes,
# Containers, NewestRuns, RecordExits, KillContainer), whichever it is. Podman-only: the tests of podman
# itself (its service killed or remote, its pods removed behind runlet's back, the chart, which runs
# runlet on podman; TestHelmInstallRunc runs there too, its runlet pod on podman driving runc).
RUNC_E2E_TESTS ?= TestRuncNode TestClusterNetwork TestObservedGeneration TestLifecycleHooks TestHostNetworkPodEnv \
	TestImagePulls TestProbes TestReadinessGates TestInPlaceResize TestServicesAndDNS TestStatusReconciled \
	TestVolumes TestNetworkFaults TestBadInput TestPodOSRejection TestEphemeralContainers \
	TestFinishedPodSurvivesRestart TestNodeRegistersReady TestNodeRegistersUntaintedWithLabels \
	TestSIGTERMStopsCleanly TestPods TestReadoptionAfterSIGKILL TestPodReplacedWithSameName TestResources \
	TestSecurityContext TestStaticPodFromFile TestStaticPodFromURL TestStaticPodReAdded TestKubeletAPI \
	TestPodNetwork TestMissingClusterDNS TestCrashLoopBackOff TestSecurityBootstrapServingCert TestSecurity \
	TestSecurityAlwaysAllow TestTermination TestTakenPortIsFatal TestClientCAFromTheCluster \
	TestFaultSIGKILLWith50Pods TestFaultAPIServerStopped60s TestContainerLogRotation TestSidecars TestDiskPressureEvicts \
	TestRestartAllContainers TestUserNamespaces TestRestartAsAService TestNodeIdentity TestTracesFollowAPod \
	TestGracefulNodeShutdown TestGracefulNodeShutdownOnLogind \
	TestRebootWithAPIServerDown
# space is one blank: the list above is joined with | into one -run pattern
space := $(subst x, ,x)
test-e2e-runc: deps cp
	RUNLET_E2E_RUNTIME=runc $(GO) test -count=1 -p 1 -parallel 3 -timeout $(E2E_TIMEOUT) -run '^($(subst $(space),|,$(strip $(RUNC_E2E_TESTS))))$$' ./test/e2e/

# bench: runlet on podman and on runc next to the kubelet on containerd and to the raw backends, one run
# (test/bench; RUNLET_BENCH_* env knobs; RUNLET_BENCH_KUBELET=0 leaves the kubelet out)
bench: deps cp
	[ "$${RUNLET_BENCH_KUBELET:-1}" = 0 ] || bash hack/kubelet-build.sh >/dev/null
	RUNLET_BENCH=1 $(GO) test -count=1 -timeout 180m -v -run TestBench ./test/bench

## kubelet: the kubelet and containerd `make bench` compares runlet with (cached; hack/kubelet-build.sh)
kubelet:
	bash hack/kubelet-build.sh >/dev/null

# conformance: upstream e2e specs against runlet nodes (hack/conformance). SET=nodeconformance (default):
# the [NodeConformance] set, one node, 30-45 min; SET=conformance: all 462 [Conformance] specs, two nodes,
# about 1 h; SET=pod-api: the 163 specs of the pod API of 1.34-1.37, two nodes. RUNTIME=runc runs the nodes on the runc backend. FOCUS, SKIP, SPEC_LIST, PROCS, TIMEOUT, ADDONS env
# knobs. Not part of `make test`.
conformance:
	bash hack/conformance/run.sh

# soak: 500 pods created and deleted in waves; runlet's goroutines, fds and RSS before and after (test/soak)
soak: deps cp
	RUNLET_SOAK=1 $(GO) test -count=1 -timeout 60m -v -run TestSoak ./test/soak

# chaos: pods created and deleted without pause on a runlet node, on podman then on runc, while faults strike
# it at random (runlet, podman and the apiserver killed or stopped, reboots, the pod network's ADD failing);
# invariants checked after each fault (test/chaos, docs/chaos.md). RUNLET_CHAOS_MINUTES per backend (30),
# RUNLET_CHAOS_SEED replays a run; the timeout leaves each backend 15 minutes to settle and clean up.
# Not part of `make test`.
chaos: deps cp
	m=$${RUNLET_CHAOS_MINUTES:-30}; RUNLET_CHAOS=1 RUNLET_CHAOS_MINUTES=$$m \
	  $(GO) test -count=1 -timeout $$(( ($${m%.*} + 15) * 2 ))m -v -run TestChaos ./test/chaos

# scale: 100 of kubemark's hollow kubelets, then 100 hollow runlet nodes, 30 pods a node, on one control
# plane: requests and watches per node, pod-start latency, memory per node (test/scale, docs/scale.md;
# RUNLET_SCALE_* env knobs). It raises the open files and inotify limits the nodes need. Not part of
# `make test`.
scale: cp
	RUNLET_SCALE=1 $(GO) test -count=1 -timeout 120m -v -run TestScale ./test/scale

# lint needs helm, built with the control plane (cp), and shellcheck (hack/install-deps.sh), run on every
# bash script of the repo: *.sh and .ci/run (its settings: .shellcheckrc)
lint: cp
	@command -v shellcheck >/dev/null || { echo "shellcheck is missing: bash hack/install-deps.sh"; exit 1; }
	find . -name '*.sh' -not -path './.git/*' -not -path './.run/*' -not -path './hack/cp-modules/*' -print0 | \
	  xargs -0 shellcheck -x .ci/run
	@out=$$(find . -name '*.go' -not -path './.git/*' -not -path './.run/*' -not -path './hack/cp-modules/*' | xargs -r gofmt -l); \
	  if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...
	bash hack/chart-lint.sh

## clean: stop everything `make run` started, remove its node's podman pods, bin/ and .run/
clean:
	RM_PODS=1 bash hack/stop.sh
	rm -rf bin .run
