package stats

import (
	"time"

	"golang.org/x/sys/unix"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// fsStats measures the filesystem holding path; nil when it cannot.
func fsStats(path string, now time.Time) *statsv1alpha1.FsStats {
	if path == "" {
		return nil
	}
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return nil
	}
	bsize := uint64(st.Bsize)
	return &statsv1alpha1.FsStats{
		Time:           metav1.NewTime(now),
		AvailableBytes: ptr(st.Bavail * bsize),
		CapacityBytes:  ptr(st.Blocks * bsize),
		UsedBytes:      ptr((st.Blocks - st.Bfree) * bsize),
		InodesFree:     ptr(st.Ffree),
		Inodes:         ptr(st.Files),
		InodesUsed:     ptr(st.Files - st.Ffree),
	}
}

func ptr[T any](v T) *T { return &v }
