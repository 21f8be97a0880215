package imagestore

import "golang.org/x/sys/unix"

// statfsUsage is the size of the filesystem holding path, and what of it
// an unprivileged user may still take, as the kubelet's image GC counts.
func statfsUsage(path string) (capacity, available uint64, err error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return 0, 0, err
	}
	return st.Blocks * uint64(st.Bsize), st.Bavail * uint64(st.Bsize), nil
}
