//go:build unix

package datafile

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockDir takes an exclusive lock on dir, held until the returned function runs or the process
// ends (a crash releases it). It fails at once when another process holds it.
func lockDir(dir string) (func() error, error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(d.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		d.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("in use by another process (a server or command with the same -data): stop it first")
		}
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	return d.Close, nil
}
