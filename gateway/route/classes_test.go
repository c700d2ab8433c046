package route

import (
	"slices"
	"testing"

	"github.com/reqgate/reqgate/config"
)

// TestCachedClassesAgreeWithConfig: cache.ttl_by_route is checked by config against its own list of the cached
// route classes (config does not import this package); the two lists must be the same.
func TestCachedClassesAgreeWithConfig(t *testing.T) {
	for _, name := range config.CachedRouteClasses {
		if _, ok := CachedClass(name); !ok {
			t.Errorf("config.CachedRouteClasses names %q, which is no cached route class", name)
		}
	}
	for name := range cached {
		if !slices.Contains(config.CachedRouteClasses, name) {
			t.Errorf("cached route class %q is missing from config.CachedRouteClasses", name)
		}
	}
}
