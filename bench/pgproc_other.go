//go:build !linux

package main

import (
	"errors"
	"os/exec"
	"syscall"
)

type pgOwner struct{}

func pgProcAttr(*exec.Cmd, *pgOwner) {}

func pgRunAs() (*pgOwner, error) {
	return nil, errors.New("the PostGraphile comparison runs on Linux only")
}

func pgSignalGroup(int, syscall.Signal) {}

const pgTicks = 100
