// Package containerlog reads container logs in the CRI / k8s-file format
// that conmon writes for podman (and for runlet's own runc backend):
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
// and the file has been drained. Log rotation is not followed, as in the
// kubelet's reader.
package containerlog
