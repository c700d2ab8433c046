// Package budget is the one definition of the header by which a gateway tells the core how long it will still
// wait for the answer to a request: the gateway writes it (gateway/deadline.go), the core reads it and refuses
// work past it (core/api). Both sides import this package, so the name and the format cannot drift apart.
//
// The header carries a remaining time, not a point in time: the core counts it from when it received the
// request, on its own clock, so the budget means the same whatever the skew between the two hosts' clocks
// (gRPC's grpc-timeout is relative for the same reason). What it does not count is the request's time in
// transit, which between a gateway and its core is far below the budget's millisecond unit of account.
package budget

import (
	"errors"
	"strconv"
	"time"

	"github.com/reqgate/reqgate/internal/digits"
)

// Header names the budget: a decimal count of milliseconds, e.g. "Reqgate-Timeout: 27000".
const Header = "Reqgate-Timeout"

// maxDigits bounds the value: 9 digits are 11.5 days, longer than any timeout, and cannot overflow.
const maxDigits = 9

// Max is the largest budget the header can say.
const Max = 999_999_999 * time.Millisecond

// Append appends d as the header's value: whole milliseconds, rounded down (the budget is never overstated),
// 0 for a budget that is spent, at most Max.
func Append(dst []byte, d time.Duration) []byte {
	d = min(max(d, 0), Max)
	return strconv.AppendInt(dst, int64(d/time.Millisecond), 10)
}

// ErrMalformed is a value that is not 1 to 9 decimal digits.
var ErrMalformed = errors.New("want a whole number of milliseconds, 1 to 9 digits")

// Parse reads the header's value.
func Parse(v string) (time.Duration, error) {
	ms, ok := digits.Parse(v, maxDigits)
	if !ok {
		return 0, ErrMalformed
	}
	return time.Duration(ms) * time.Millisecond, nil
}
