//go:build !unix

package main

import "time"

// processCPU is not measured on this platform: the CPU columns read 0.
func processCPU() time.Duration { return 0 }

// hold blocks the calling goroutine for d.
func hold(d time.Duration) { time.Sleep(d) }
