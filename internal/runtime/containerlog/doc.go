// Package containerlog reads container logs in the CRI / k8s-file format
// that conmon writes for podman:
//
//	2016-10-06T00:17:09.669794202Z stdout P log content 1
//	2016-10-06T00:17:09.669794203Z stderr F log content 2
//
// It exists because podman 4.3's logs API cuts timestamps to whole seconds,
// while `kubectl logs --timestamps` and --since-time need the nanoseconds the
// file holds. The semantics follow the kubelet's CRI log reader
// (k8s.io/cri-client/pkg/logs): tail counts file lines, partial lines are
// joined and take one timestamp prefix, limitBytes counts what is written
// (prefixes included), and following ends once the container no longer runs
// and the file has been drained. A follower crosses a rotation (the log
// renamed and reopened at its path): the old file is read to its end, then
// the new one from its start.
package containerlog
