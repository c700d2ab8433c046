package gateway

import (
	"net"

	"golang.org/x/sys/unix"
)

// peerClosed reports whether the caller has closed (or reset) its connection: the kernel's state of the TCP
// connection, read without touching its data, is no longer ESTABLISHED once the caller's FIN or RST arrived
// (CLOSE_WAIT, CLOSE). Unlike a look for the end of the stream, it sees through bytes still unread: the TLS
// close_notify a TLS caller sends before its FIN, a pipelined request. A caller that only shut down its
// sending side counts as gone, as in Go's net/http server, which cancels a request's context when it reads the
// end of the stream. False when unknown (no TCP socket under c).
func peerClosed(c net.Conn) bool {
	gone := false
	controlSocket(c, func(fd uintptr) {
		info, err := unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO)
		// The kernel's TCP states, which x/sys names for BPF: ESTABLISHED is 1.
		gone = err == nil && info.State != unix.BPF_TCP_ESTABLISHED
	})
	return gone
}
