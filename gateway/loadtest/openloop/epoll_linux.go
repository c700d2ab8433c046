package main

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/url"
	"runtime"
	"slices"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// runEpoll is run on one OS thread of its own, without Go's scheduler or poller: a timerfd on CLOCK_MONOTONIC
// releases each request at its due time (the kernel's high-resolution timers, where Go's own sleep wakes in whole
// milliseconds when its poller is idle, which released requests in bursts), and one epoll loop writes the
// requests and reads the answers of every connection. A request is timed from its due time, so a server that
// falls behind pays for the queue it causes, and so does the generator: its lateness is reported beside.
// The answers are parsed only as far as timing needs: the status code and Content-Length.
func runEpoll(rawURL string, hs headers, rate int, d time.Duration, conns int) (result, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme != "http" {
		return result{}, fmt.Errorf("url %q: want http://host:port/path", rawURL)
	}
	addr, err := net.ResolveTCPAddr("tcp4", u.Host)
	if err != nil {
		return result{}, err
	}
	req := []byte("GET " + u.RequestURI() + " HTTP/1.1\r\nHost: " + u.Host + "\r\n")
	for _, h := range hs {
		req = append(req, h...)
		req = append(req, "\r\n"...)
	}
	req = append(req, "\r\n"...)

	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return result{}, err
	}
	defer unix.Close(ep)
	tfd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return result{}, err
	}
	defer unix.Close(tfd)
	if err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, tfd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(tfd)}); err != nil {
		return result{}, err
	}

	type conn struct {
		fd   int
		busy bool
		due  int64 // of the request in flight
		buf  []byte
	}
	var idle []*conn // connections with no request in flight
	byFD := map[int]*conn{}
	dial := func() (*conn, error) {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return nil, err
		}
		sa := &unix.SockaddrInet4{Port: addr.Port}
		copy(sa.Addr[:], addr.IP.To4())
		if err := unix.Connect(fd, sa); err != nil {
			unix.Close(fd)
			return nil, err
		}
		_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
		if err := unix.SetNonblock(fd, true); err != nil {
			unix.Close(fd)
			return nil, err
		}
		if err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)}); err != nil {
			unix.Close(fd)
			return nil, err
		}
		c := &conn{fd: fd, buf: make([]byte, 0, 64<<10)}
		byFD[fd] = c
		return c, nil
	}
	for range conns {
		c, err := dial()
		if err != nil {
			return result{}, fmt.Errorf("connect %s: %w", addr, err)
		}
		idle = append(idle, c)
	}
	defer func() {
		for _, c := range byFD {
			unix.Close(c.fd)
		}
	}()

	n := int(int64(rate) * int64(d) / int64(time.Second))
	r := result{offered: n, perSec: rate, lat: make([]time.Duration, 0, n), late: make([]time.Duration, 0, n)}
	now := func() int64 {
		var ts unix.Timespec
		_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
		return ts.Nano()
	}
	start := now() + int64(time.Millisecond)
	dueAt := func(i int) int64 { return start + int64(i)*int64(time.Second)/int64(rate) }
	arm := func(at int64) error {
		return unix.TimerfdSettime(tfd, unix.TFD_TIMER_ABSTIME, &unix.ItimerSpec{Value: unix.NsecToTimespec(at)}, nil)
	}
	if err := arm(dueAt(0)); err != nil {
		return result{}, err
	}
	fail := func(err error) {
		r.errs++
		if r.firstErr == nil {
			r.firstErr = err
		}
	}
	var waiting []int64 // due times of released requests no connection was free for, oldest first
	send := func(c *conn, due int64) bool {
		if _, err := unix.Write(c.fd, req); err != nil { // a request fits any socket buffer at once
			fail(err)
			return false
		}
		c.busy, c.due = true, due
		return true
	}
	// next gives the idle connection c the oldest waiting request, or puts it with the idle ones.
	next := func(c *conn) {
		for len(waiting) > 0 {
			due := waiting[0]
			waiting = waiting[1:]
			if send(c, due) {
				return
			}
		}
		idle = append(idle, c)
	}
	// redial replaces c's socket by a new connection.
	redial := func(c *conn) error {
		delete(byFD, c.fd)
		unix.Close(c.fd)
		nc, err := dial()
		if err != nil {
			return fmt.Errorf("reconnect: %w", err)
		}
		*c = *nc
		byFD[c.fd] = c
		return nil
	}
	released, answered := 0, 0
	events := make([]unix.EpollEvent, 256)
	var tbuf [8]byte
	stopAt := int64(0) // once everything is released: give up on answers 10 s after the last one was due
	for answered+r.errs < n {
		timeout := -1
		if stopAt != 0 {
			left := stopAt - now()
			if left <= 0 {
				if r.firstErr == nil {
					// What the connections waiting for an answer hold says whose the loss is: nothing (the
					// server sent nothing) or bytes this reader could not take for an answer.
					stuck, held := 0, 0
					for _, c := range byFD {
						if c.busy {
							stuck++
							held += len(c.buf)
						}
					}
					r.firstErr = fmt.Errorf("%d requests unanswered 10s after the last was due (%d connections waiting, holding %d unread bytes)",
						n-answered-r.errs, stuck, held)
				}
				r.errs = n - answered
				break
			}
			timeout = int(left/int64(time.Millisecond)) + 1
		}
		k, err := unix.EpollWait(ep, events, timeout)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return result{}, err
		}
		for _, ev := range events[:k] {
			fd := int(ev.Fd)
			if fd == tfd {
				_, _ = unix.Read(tfd, tbuf[:])
				t := now()
				for ; released < n && dueAt(released) <= t; released++ {
					due := dueAt(released)
					r.late = append(r.late, time.Duration(t-due))
					waiting = append(waiting, due)
				}
				for len(waiting) > 0 && len(idle) > 0 {
					c := idle[len(idle)-1]
					idle = idle[:len(idle)-1]
					next(c)
				}
				if released < n {
					if err := arm(dueAt(released)); err != nil {
						return result{}, err
					}
				} else if stopAt == 0 {
					stopAt = dueAt(n-1) + int64(10*time.Second)
				}
				continue
			}
			c := byFD[fd]
			if c == nil {
				continue
			}
			// ended: the server closed the connection (a request in flight counts as an error) or said its
			// last answer was the last (Connection: close, nginx's keepalive_requests).
			ended, wasIdle := false, false
			for !ended {
				if len(c.buf) == cap(c.buf) {
					c.buf = slices.Grow(c.buf, cap(c.buf))
				}
				m, err := unix.Read(c.fd, c.buf[len(c.buf):cap(c.buf)])
				if errors.Is(err, unix.EAGAIN) {
					break
				}
				if err != nil || m == 0 {
					if err == nil {
						err = errors.New("connection closed by the server")
					}
					if c.busy {
						fail(err)
					}
					ended, wasIdle = true, !c.busy
					break
				}
				c.buf = c.buf[:len(c.buf)+m]
				for c.busy && !ended {
					size, status, last, ok := answer(c.buf)
					if !ok {
						break
					}
					r.lat = append(r.lat, time.Duration(now()-c.due))
					answered++
					if status != 200 {
						r.non200++
					}
					c.buf = c.buf[:copy(c.buf, c.buf[size:])]
					c.busy, ended = false, last
					if !ended {
						next(c)
					}
				}
			}
			if ended {
				if err := redial(c); err != nil {
					return r, err
				}
				// A connection the server closed while it was idle is in idle already: listing it twice
				// would send two requests at once on it and lose count of one.
				if !wasIdle {
					next(c)
				}
			}
		}
	}
	r.elapsed = time.Duration(now() - start)
	slices.Sort(r.lat)
	slices.Sort(r.late)
	if len(r.lat) == 0 {
		return r, errors.Join(errors.New("no request answered"), r.firstErr)
	}
	return r, nil
}

// answer reports the length and status of the complete HTTP/1.1 response at the start of b, if b holds one,
// and whether it is the connection's last (Connection: close). Only answers with a Content-Length are
// understood (every answer of the servers measured has one).
func answer(b []byte) (size, status int, last, ok bool) {
	end := bytes.Index(b, []byte("\r\n\r\n"))
	if end < 0 || len(b) < 12 {
		return 0, 0, false, false
	}
	status, _ = strconv.Atoi(string(b[9:12]))
	length := 0
	for line := range bytes.SplitSeq(b[:end+2], []byte("\r\n")) {
		name, value, found := bytes.Cut(line, []byte(":"))
		if !found {
			continue
		}
		name, value = bytes.TrimSpace(name), bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			length, _ = strconv.Atoi(string(value))
		case bytes.EqualFold(name, []byte("Connection")):
			last = bytes.EqualFold(value, []byte("close"))
		}
	}
	size = end + 4 + length
	return size, status, last, len(b) >= size
}
