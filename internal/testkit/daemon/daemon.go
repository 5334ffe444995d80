// Package daemon runs a server process in the foreground for a test or a
// benchmark (nginx, PgBouncer): it starts it, waits until it accepts
// connections and stops it.
package daemon

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// A Process is a server process that Start started.
type Process struct {
	cmd    *exec.Cmd
	exited chan error
}

// Start starts cmd with its output in the file logPath, and returns once
// addr accepts connections. It fails, with what the file holds, when the
// process exits first or does not listen within wait.
func Start(cmd *exec.Cmd, logPath, addr string, wait time.Duration) (*Process, error) {
	// A file, not a pipe: the children of a server would hold a pipe open
	// past it.
	out, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer out.Close() // the process holds its own copy
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &Process{cmd: cmd, exited: make(chan error, 1)}
	go func() { p.exited <- cmd.Wait() }()
	for deadline := time.Now().Add(wait); ; time.Sleep(50 * time.Millisecond) {
		select {
		case err := <-p.exited:
			log, _ := os.ReadFile(logPath)
			return nil, fmt.Errorf("%s exited: %v\n%s", cmd.Path, err, log)
		default:
		}
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return p, nil
		}
		if time.Now().After(deadline) {
			p.Stop()
			log, _ := os.ReadFile(logPath)
			return nil, fmt.Errorf("%s does not listen on %s after %v:\n%s", cmd.Path, addr, wait, log)
		}
	}
}

// Pid returns the process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Stop sends the process SIGTERM, kills it if it has not exited 10 seconds
// later, and waits for it.
func (p *Process) Stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}
