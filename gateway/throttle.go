package gateway

import (
	"strconv"
	"time"

	"github.com/reqgate/reqgate/ratelimit"
)

// throttle.go writes the interface's answers about the rate limit (docs/api.md, Rate limits): the limiter decides, the gateway
// words the decision as the mirrored service does.

// throttleXML is the body of a rate-limit rejection, exactly as the mirrored service sends it, with
// try_again_after in whole seconds, rounded up, at least 1 (the Retry-After value).
func throttleXML(retryAfter time.Duration) []byte {
	const head = "<error>\n  <code>Request_Throttled</code>\n  <message>Concurrent rate limit exceeded. Try again after " +
		"the following amount of time has elapsed (in seconds):</message>\n  <try_again_after>"
	b := make([]byte, 0, len(head)+40)
	b = append(b, head...)
	b = strconv.AppendInt(b, int64(ratelimit.RetryAfterSeconds(retryAfter)), 10)
	return append(b, "</try_again_after>\n</error>\n"...)
}

// throttleStatusXML is the body of GET {base_url}/rate_throttle_status for a Limiter.Status result:
// api_available yes when retryAfter is 0, else no with try_again_after in whole seconds, rounded up.
func throttleStatusXML(retryAfter time.Duration) []byte {
	if retryAfter <= 0 {
		return []byte("<rate_throttle_status>\n<api_available>yes</api_available>\n</rate_throttle_status>\n")
	}
	b := []byte("<rate_throttle_status>\n<api_available>no</api_available>\n<try_again_after>")
	b = strconv.AppendInt(b, int64(ratelimit.RetryAfterSeconds(retryAfter)), 10)
	return append(b, "</try_again_after>\n</rate_throttle_status>\n"...)
}
