package gateway

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
)

// headerAuthProof is the core's explicit word that it authenticated a request's credential for the request's
// account. The gateway trusts a credential on this header alone, never on a status code: the core answers some
// requests (an unknown version, a malformed path) before it authenticates anything.
const headerAuthProof = "Reqgate-Authenticated"

// authProof is the value the core gives in headerAuthProof after authenticating the Authorization header auth
// for apiKey: the hex SHA-256 of both, each length-prefixed (the core's api.AuthProof; TestAuthProofVector pins
// the format on both sides).
func authProof(apiKey string, auth []byte) []byte {
	h := sha256.New()
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(apiKey)))
	h.Write(n[:])
	h.Write([]byte(apiKey))
	binary.BigEndian.PutUint32(n[:], uint32(len(auth)))
	h.Write(n[:])
	h.Write(auth)
	var sum [sha256.Size]byte
	return hex.AppendEncode(nil, h.Sum(sum[:0]))
}
