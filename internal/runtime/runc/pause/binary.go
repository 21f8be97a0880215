package pause

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/runlet/runlet/internal/runtime/runc/pause/pauseproc"
)

// BinaryName is the small program that runs as a pod's pause process,
// built beside runlet (cmd/runlet-pause). runlet's own binary does the same
// when it is missing, but as a binary of 100 MB whose Go runtime takes
// some 27 ms of CPU to start where this one's takes 7, and whose memory
// is charged to every pod.
const BinaryName = "runlet-pause"

// Binary is the program pause processes run, held open so that a process
// made in a user namespace of its own executes it through its own file
// descriptor, without reaching the directory it lies in.
type Binary struct {
	file *os.File
	name string
	// Own says it is runlet's own binary: runlet-pause was not found.
	Own bool
}

// OpenBinary opens the pause program: path when given, else runlet-pause
// beside runlet's executable or in PATH, else runlet's own binary.
func OpenBinary(path string) (*Binary, error) {
	own := false
	if path == "" {
		path, own = findBinary()
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("the pause program: %w", err)
	}
	name := path
	if own {
		name = "runlet's own binary"
	}
	return &Binary{file: f, name: name, Own: own}, nil
}

func findBinary() (path string, own bool) {
	if exe, err := os.Executable(); err == nil {
		if exe, err = filepath.EvalSymlinks(exe); err == nil {
			if p, err := exec.LookPath(filepath.Join(filepath.Dir(exe), BinaryName)); err == nil {
				return p, false
			}
		}
	}
	if p, err := exec.LookPath(BinaryName); err == nil {
		return p, false
	}
	return "/proc/self/exe", true
}

// Name is the program's path as found, for logs.
func (b *Binary) Name() string { return b.name }

// Close closes the program's file; pause processes started go on.
func (b *Binary) Close() error { return b.file.Close() }

// command is a command that executes the program through a file
// descriptor it is given after files (pauseproc.EnvExecFD), with env. A nil
// Binary is runlet's own, through /proc/self/exe (a test binary that
// imports package pauseproc is one too).
func (b *Binary) command(env []string, files ...*os.File) *exec.Cmd {
	cmd := exec.Command("/proc/self/exe")
	if b != nil {
		cmd.Path = fmt.Sprintf("/proc/self/fd/%d", 3+len(files))
		env = append(env, fmt.Sprintf("%s=%d", pauseproc.EnvExecFD, 3+len(files)))
		files = append(files, b.file)
	}
	cmd.Args = []string{pauseproc.Arg0}
	cmd.Env = env
	cmd.ExtraFiles = files
	return cmd
}
