//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package gateway

import (
	"errors"
	"net"
	"syscall"
)

// peerClosed reports whether the caller has closed (or reset) its connection: a look at the socket, without
// waiting and without taking a byte from it, finds its end of stream. Bytes still unread (a pipelined request, a
// TLS close_notify) hide it, so false means "not known to be gone"; Linux reads the TCP state instead
// (peer_linux.go). A caller that only shut down its sending side counts as gone.
func peerClosed(c net.Conn) bool {
	gone := false
	var b [1]byte
	// Control, not Read: it neither waits for the socket to be readable nor takes the read lock of a Read that
	// some wrapper might have pending; the socket is non-blocking, and MSG_DONTWAIT says so again.
	controlSocket(c, func(fd uintptr) {
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case err == nil:
			gone = n == 0 // the end of the stream; n > 0 is data still to read
		case errors.Is(err, syscall.EAGAIN), errors.Is(err, syscall.EWOULDBLOCK), errors.Is(err, syscall.EINTR):
			// open, nothing to read: the caller is waiting
		default:
			gone = true // reset, or no longer a connection
		}
	})
	return gone
}
