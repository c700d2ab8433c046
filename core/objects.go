package core

import (
	"crypto/sha256"
	"encoding/base64"
)

// BuiltinObjects returns the kinds every account has, in the order the interface lists them.
func BuiltinObjects() []Object {
	return []Object{
		{APIPrefix: KindRequirement, NameSingular: "Requirement", NamePlural: "Requirements", IDPrefix: "RE"},
		{APIPrefix: KindFeature, NameSingular: "Feature", NamePlural: "Features", IDPrefix: "FT"},
		{APIPrefix: KindUseCase, NameSingular: "Use Case", NamePlural: "Use Cases", IDPrefix: "UC"},
	}
}

// ObjectUniqueID is the object_unique_id of a kind of an account: opaque, URL-safe, and derived from the
// api_key and api_prefix alone, so it is stable across restarts and the same in every store (a copy from
// SQLite to PostgreSQL keeps it).
func ObjectUniqueID(apiKey, apiPrefix string) string {
	sum := sha256.Sum256([]byte("reqgate object\x00" + apiKey + "\x00" + apiPrefix))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}
