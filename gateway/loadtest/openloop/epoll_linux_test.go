package main

import "testing"

// answer finds where a response ends, its status and whether it ends the connection, or that more is to come.
func TestAnswer(t *testing.T) {
	const ok = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"
	tests := []struct {
		name, in     string
		size, status int
		last, whole  bool
	}{
		{"whole", ok, len(ok), 200, false, true},
		{"two, the first counted", ok + ok, len(ok), 200, false, true},
		{"body cut short", ok[:len(ok)-1], len(ok), 200, false, false},
		{"head cut short", ok[:20], 0, 0, false, false},
		{"names in any case, the last answer", "HTTP/1.1 401 Unauthorized\r\ncontent-length: 0\r\nCONNECTION: Close\r\n\r\n",
			len("HTTP/1.1 401 Unauthorized\r\ncontent-length: 0\r\nCONNECTION: Close\r\n\r\n"), 401, true, true},
		{"keep-alive", "HTTP/1.1 204 No Content\r\nConnection: keep-alive\r\n\r\n",
			len("HTTP/1.1 204 No Content\r\nConnection: keep-alive\r\n\r\n"), 204, false, true},
	}
	for _, tt := range tests {
		size, status, last, whole := answer([]byte(tt.in))
		if whole != tt.whole || whole && (size != tt.size || status != tt.status || last != tt.last) {
			t.Errorf("%s: size %d, status %d, last %v, whole %v; want %d, %d, %v, %v",
				tt.name, size, status, last, whole, tt.size, tt.status, tt.last, tt.whole)
		}
	}
}
