package config

import "testing"

// BenchmarkLoad measures a full start-up load: the contract's file, three variables and three flags.
func BenchmarkLoad(b *testing.B) {
	path := writeFile(b, "r.yaml", contractExample)
	args := []string{"--config", path, "--listen", ":8080", "--redis", "redis://:pw@r:6379/0", "--set", "cache.ttl=10s"}
	env := []string{"REQGATE_CACHE_SCOPE=user", "REQGATE_AUTH_TTL=30s", "PATH=/bin", "HOME=/root"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Load(RoleGateway, args, env); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOverrides measures reading and validating files with 1,000 and 10,000 per-key overrides (the cost
// per override should not grow with their number).
func BenchmarkOverrides(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		data := []byte("ratelimit:\n  policies: [{name: account, key: api_key, limit: 25, period: 10s}]\n  overrides:\n")
		for i := range n {
			data = append(data, []byte("    - {api_key: key-"+itoa(i)+", policy: account, limit: 1000, period: 1s}\n")...)
		}
		b.Run(itoa(n), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				c := Default(RoleGateway)
				if errs := c.applyFile("big.yaml", data); len(errs) > 0 {
					b.Fatal(errs)
				}
				if err := c.Validate(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var buf [20]byte
	n := len(buf)
	for ; i > 0; i /= 10 {
		n--
		buf[n] = byte('0' + i%10)
	}
	return string(buf[n:])
}
