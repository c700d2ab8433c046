//go:build !linux

package main

import (
	"errors"
	"time"
)

func runEpoll(string, headers, int, time.Duration, int) (result, error) {
	return result{}, errors.New("-engine epoll needs Linux; use -engine client")
}
