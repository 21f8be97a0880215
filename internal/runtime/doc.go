// Package runtime is the backend contract: what the kubelet core needs from
// a container backend, in roles, as CRI splits its RuntimeService,
// ImageService and streaming. It speaks of sandboxes and containers, never of
// Kubernetes objects, so that any backend sits behind it unchanged: podman
// (internal/runtime/podman) and runc (internal/runtime/runc).
//
// The roles and who uses them:
//   - Lifecycle (images, sandboxes, containers): kuberuntime;
//   - Observer (one list with a filter, events): pleg;
//   - Streamer (logs, exec, attach, port-forward): the kubelet API;
//   - Files (log files, root filesystems): log rotation and disk stats;
//   - StatsReader: the summary API and eviction;
//   - Status (ping, host info, capabilities): the node and the wiring.
//
// A backend answers Capabilities once, at start; the core reads them there
// and never type-asserts a backend for more.
//
// Every backend keeps these rules; runtimetest checks them:
//   - Only the core stamps identity labels (the Label* constants): a backend
//     stores the labels it is given as they are, and reports them back
//     unchanged, across restarts of runlet and of the backend. Re-adoption
//     after a restart rests on them.
//   - A backend given an owner lists, inspects and reports events of only
//     the objects whose LabelOwner is that owner: several runlets may share
//     one backend.
//   - Whatever a backend runs to hold a sandbox (podman's infra container)
//     is never listed as a container.
//   - A sandbox's IPs and NetNS are reported for as long as it exists.
//   - A sandbox with UserNS (only a backend with Capabilities.UserNamespaces
//     gets one) holds its containers in that one user namespace, which owns
//     the pod's other namespaces; they see what root owns on the host as
//     their root's (idmapped mounts). Given AttachNetwork, it makes the
//     pod's network namespace in that user namespace and calls it with that
//     namespace before CreateSandbox returns.
package runtime
