package config

import (
	"bytes"
	"testing"
)

// FuzzLoadYAML feeds arbitrary bytes to the file reader, Validate and Print: none may panic, and a file that
// reads without refusal must print.
func FuzzLoadYAML(f *testing.F) {
	f.Add([]byte(contractExample))
	f.Add([]byte("cache:\n  ttl: 10\n"))
	f.Add([]byte("ratelimit:\n  policies:\n    - &p {name: a, key: ip, limit: 1, period: 1s}\n    - *p\n"))
	f.Add([]byte("a: &a [*a]\n"))
	f.Add([]byte("cache: {<<: {ttl: 1s}}\n"))
	f.Add([]byte("---\n---\n"))
	f.Add([]byte("redis: {url: 'redis://:p@h:1/0'}\nlisten: '[::1]:0'\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c := Default(RoleGateway)
		errs := c.applyFile("fuzz.yaml", data)
		verr := c.Validate()
		if len(errs) == 0 && verr == nil {
			var b bytes.Buffer
			if err := c.Print(&b); err != nil {
				t.Fatalf("Print of a valid config: %v", err)
			}
		}
	})
}
