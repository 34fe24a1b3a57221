//go:build unix

package main

import (
	"syscall"
	"time"
)

// processCPU returns the user plus system CPU time this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// hold blocks the calling goroutine for d with the kernel's precision: the Go runtime's timers
// wake through epoll in whole milliseconds, which overshoots a delay of a few milliseconds by a
// noticeable fraction; nanosleep holds it to the kernel's precision. The thread blocks in the system call
// and the runtime hands its processor to another one meanwhile.
func hold(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	for syscall.Nanosleep(&ts, &ts) == syscall.EINTR {
	}
}
