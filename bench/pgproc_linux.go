package main

import (
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"syscall"
)

// pgProcAttr is how the comparison starts PostgreSQL and PostGraphile: in their own process
// group (stopped as a group), killed if the benchmark dies, and, when the benchmark runs as root
// (initdb and postgres refuse root), as the unprivileged user postgres (the Debian package's).
func pgProcAttr(cmd *exec.Cmd, owner *pgOwner) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if owner != nil {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: owner.uid, Gid: owner.gid}
		cmd.Env = append(os.Environ(), "HOME="+owner.home, "USER="+owner.name, "LOGNAME="+owner.name)
	}
}

// pgOwner is the user the cluster runs as.
type pgOwner struct {
	name, home string
	uid, gid   uint32
}

// pgRunAs returns the unprivileged user to run PostgreSQL as: nil when this process is not root
// (it runs PostgreSQL itself), the user postgres when it is.
func pgRunAs() (*pgOwner, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, err
	}
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	return &pgOwner{name: u.Username, home: u.HomeDir, uid: uint32(uid), gid: uint32(gid)}, nil
}

// pgSignalGroup signals the process group led by pid.
func pgSignalGroup(pid int, sig syscall.Signal) { _ = syscall.Kill(-pid, sig) }

// pgTicks is the clock-tick rate of /proc/PID/stat's CPU fields (USER_HZ, 100 on Linux).
const pgTicks = 100
