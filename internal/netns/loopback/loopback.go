// Package loopback brings up a network namespace's "lo". It imports only
// x/sys, so that the pause process (package pauseproc), which runs it
// before runlet's heavier packages are initialised, stays quick to start.
package loopback

import "golang.org/x/sys/unix"

// Up brings up "lo" in the calling thread's network namespace: a new
// namespace has it down, and a pod without one cannot reach itself.
func Up() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}
