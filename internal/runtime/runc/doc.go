// Package runc is the runc backend: it runs a pod's containers with runc
// directly, without a container engine between runlet and the OCI runtime.
//
// A pod's sandbox is a pause process (package pause) holding the pod's IPC,
// UTS and PID namespaces, beside the network namespace the core's pod
// network made, and a tmpfs for the pod's /dev/shm. Each container has a
// bundle: its config.json from package ocispec, and an overlay root
// filesystem whose lower layers are the image's layers in package
// imagestore (fuse-overlayfs where the kernel refuses the overlay). conmon,
// installed with podman, runs `runc create` for it and stays beside it: it
// holds the container's stdio, writes its log in the CRI format, serves
// attach, and writes its exit code to the exit directory, so that
// containers outlive runlet. The start is runc's exec FIFO handshake, done
// in runlet (release), which saves a runc process per container. runc runs
// from a sealed in-memory copy made at start (sealedRunc), so that no
// container's `runc init` copies or bind-mounts the binary again.
//
// A pod with a user namespace of its own (hostUsers: false) has its pause
// process make that namespace first, so that it owns the pod's others, the
// network namespace among them, which the core's pod network then wires
// (SandboxConfig.AttachNetwork). Its containers join it; their root
// filesystems are overlays of idmapped clones of the layers, and their bind
// mounts idmapped clones (package idmap), attached below Options.RunDir, where
// the pod's root can reach them.
//
// Every fact the backend reports is read again from disk and /proc: the
// records written at create, the pause process's PID and start time, runc's
// pidfile and conmon's exit files. A fresh instance over the same root
// therefore sees what the last one left, which is how a restarted runlet
// re-adopts its pods with no restart.
//
// On disk, under the root (--root-dir/runc):
//
//	images/            the image store
//	state/             runc's --root
//	exits/             conmon's --exit-dir
//	s/<id>/sandbox.json, shm/         a sandbox
//	c/<id>/container.json, config.json, rootfs/, upper/, work/, ctr.log,
//	       attach, ctl, pidfile, conmon.pid               a container's bundle
//
// and under Options.RunDir (/run/runlet/runc), for a pod with a user
// namespace of its own:
//
//	<id>/rootfs/, m/<n>, img<n>/    a container's mount points
package runc
