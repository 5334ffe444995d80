package main

import "syscall"

// smallReceiveBuffer asks for a small receive buffer on a client's socket,
// so that a client that does not read stops taking the server's answer
// soon, as a hostile one would arrange.
func smallReceiveBuffer(_, _ string, c syscall.RawConn) error {
	var err error
	c.Control(func(fd uintptr) {
		err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
	})
	return err
}
