package runc

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/conmon"
	"github.com/runlet/runlet/internal/runtime/runc/pause"
)

// processFromFile identifies the process whose PID a pidfile holds.
func processFromFile(path string) (pause.Process, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return pause.Process{}, err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		return pause.Process{}, fmt.Errorf("%s: %w", path, err)
	}
	return pause.Identify(pid)
}

// List reads the records and the processes behind them: all of them, or
// one pod's.
func (b *Backend) List(_ context.Context, f runtime.ListFilter) ([]runtime.Sandbox, []runtime.Container, error) {
	sandboxIDs, containerIDs := b.index.ids(f.PodUID)
	if f.PodUID == "" {
		sandboxIDs, containerIDs = b.ids("s", sandboxFile), b.ids("c", containerFile)
	}
	var sbs []runtime.Sandbox
	for _, id := range sandboxIDs {
		rec, err := b.readSandbox(id)
		if err != nil || !b.owned(rec.Config.Labels) || (f.PodUID != "" && rec.Config.PodUID != f.PodUID) {
			continue
		}
		sbs = append(sbs, b.sandboxOf(rec))
	}
	var ctrs []runtime.Container
	for _, id := range containerIDs {
		rec, err := b.readContainer(id)
		if err != nil || !b.owned(rec.Config.Labels) || (f.PodUID != "" && rec.PodUID != f.PodUID) {
			continue
		}
		ctrs = append(ctrs, b.containerOf(rec))
	}
	return sbs, ctrs, nil
}

// InspectContainer reports one container; another owner's is not found.
func (b *Backend) InspectContainer(_ context.Context, id string) (runtime.Container, error) {
	rec, err := b.readContainer(id)
	if err != nil {
		return runtime.Container{}, err
	}
	if !b.owned(rec.Config.Labels) {
		return runtime.Container{}, fmt.Errorf("container %s: %w", id, runtime.ErrNotFound)
	}
	return b.containerOf(rec), nil
}

// startFailedCode is the exit code of a container that never ran, as
// runc and crun exit when they cannot start the process.
const startFailedCode = 128

// containerOf is a container as its record, its processes and conmon's
// exit file show it.
func (b *Backend) containerOf(rec *containerRecord) runtime.Container {
	cfg := rec.Config
	c := runtime.Container{ID: rec.ID, SandboxID: rec.SandboxID, PodUID: rec.PodUID, Namespace: rec.Namespace,
		PodName: rec.PodName, Name: cfg.Name, Attempt: cfg.Attempt, Image: cfg.Image, ImageID: rec.ImageID,
		CreatedAt: rec.CreatedAt, StartedAt: rec.StartedAt, Labels: cfg.Labels}
	if rec.StartError != "" {
		c.State, c.ExitCode, c.FinishedAt, c.Error = runtime.ContainerExited, startFailedCode, rec.StartedAt, rec.StartError
		c.Reason = runtime.ReasonStartError
		return c
	}
	// Liveness is sampled before the exit file is read: conmon writes the
	// file before it ends, so a monitor seen dead has left its file for the
	// read that follows. The other order reads "no file", then sees conmon
	// gone, and reports an exit it did record.
	running := !rec.StartedAt.IsZero() && !b.exitSeen(rec.ID) && (rec.Init.Alive() || rec.Monitor.Alive())
	if exit, ok := b.exitOf(rec); ok {
		c.State, c.ExitCode, c.FinishedAt, c.OOMKilled = runtime.ContainerExited, exit.ExitCode, exit.FinishedAt, exit.OOMKilled
		return c
	}
	switch {
	case rec.StartedAt.IsZero():
		c.State = runtime.ContainerCreated
	case running:
		// conmon writes the exit file some milliseconds after the end.
		c.State = runtime.ContainerRunning
	default:
		c.State, c.ExitCode = runtime.ContainerExited, 255
		c.Error = "the container's monitor (conmon) ended without recording how the container ended"
	}
	return c
}

// exitSeen reports that the container's exit was read before.
func (b *Backend) exitSeen(id string) bool {
	_, ok := b.exits.Load(id)
	return ok
}

// exitOf reads the container's exit from conmon's exit file, with an OOM
// kill its cgroup counted, and keeps the OOM mark in the bundle so that it
// outlives the cgroup.
func (b *Backend) exitOf(rec *containerRecord) (runtime.ContainerExit, bool) {
	// An exit, once seen, never changes: every relist after it costs no I/O.
	if seen, ok := b.exits.Load(rec.ID); ok {
		return seen.(runtime.ContainerExit), true
	}
	ex, err := conmon.ReadExit(filepath.Join(b.exitDir(), rec.ID))
	if err != nil {
		return runtime.ContainerExit{}, false
	}
	bundle := b.bundle(rec.ID)
	oom := conmon.OOMMarked(bundle)
	if !oom {
		b.ooms.Learn(rec.ID, rec.CgroupPath)
		if oom, _ = b.ooms.Check(rec.ID); oom {
			conmon.MarkOOM(bundle)
		}
	}
	exit := runtime.ContainerExit{ExitCode: ex.Code, FinishedAt: ex.FinishedAt, OOMKilled: oom}
	b.exits.Store(rec.ID, exit)
	return exit, true
}
