package runc

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"

	"golang.org/x/sys/unix"
)

// runcSeals are the seals runc looks for on its own binary: a `runc init`
// that runs from a memfd sealed with exactly these skips its copy.
const runcSeals = unix.F_SEAL_SEAL | unix.F_SEAL_SHRINK | unix.F_SEAL_GROW | unix.F_SEAL_WRITE

// useSealedRunc runs runc from a sealed copy where the host allows one.
func (b *Backend) useSealedRunc(ctx context.Context) {
	path, f, version, err := sealedRunc(ctx, b.runc)
	if err != nil {
		b.logf("runc backend: runc runs from %s, which it copies before each container's start: %v", b.runc, err)
		return
	}
	b.runc, b.runcCopy, b.version = path, f, version
}

// sealedRunc copies the runc binary at path into a sealed memfd, once per
// backend, and returns the path that runs it, the file that keeps it, and
// what it answered to --version, run to check the copy.
//
// Before each `runc init`, runc 1.1 makes sure the container cannot reach
// the host's binary (CVE-2019-5736): it bind-mounts its binary read-only
// in the host's mount namespace and unmounts it again, or else copies it,
// 9 MB, into a memfd of its own. A runc that already runs from a sealed
// memfd is safe as it is (runc's cloned_binary.c says so) and skips both,
// for every container and exec. The path is /proc/<runlet's pid>/fd/N, so
// that conmon, which runlet starts, reaches the same copy.
//
// A host that refuses one (no sealing, or memfd exec turned off by
// vm.memfd_noexec) gets an error, and the caller goes on with path.
func sealedRunc(ctx context.Context, path string) (string, *os.File, []byte, error) {
	fd, err := unix.MemfdCreate("runc", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return "", nil, nil, fmt.Errorf("memfd_create: %w", err)
	}
	f := os.NewFile(uintptr(fd), path) // its Name is the host's binary, for messages
	if err := copySealed(f, path); err != nil {
		f.Close()
		return "", nil, nil, err
	}
	sealed := fmt.Sprintf("/proc/%d/fd/%d", os.Getpid(), fd)
	version, err := exec.CommandContext(ctx, sealed, "--version").Output()
	if err != nil {
		f.Close()
		return "", nil, nil, fmt.Errorf("running the sealed copy: %w", err)
	}
	return sealed, f, version, nil
}

func copySealed(f *os.File, path string) error {
	src, err := os.Open(path)
	if err != nil {
		return err
	}
	defer src.Close()
	if _, err := io.Copy(f, src); err != nil {
		return fmt.Errorf("copying %s: %w", path, err)
	}
	if _, err := unix.FcntlInt(f.Fd(), unix.F_ADD_SEALS, runcSeals); err != nil {
		return fmt.Errorf("sealing the copy of %s: %w", path, err)
	}
	return nil
}
