package api

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
)

// AuthProofHeader is the response header by which the core tells a gateway that it authenticated the request's
// credential for the request's account. A gateway trusts a credential for cached reads only on this explicit
// word, never on a status code: the core answers some requests (an unknown version, a malformed path) before
// it authenticates anything, and those answers prove nothing.
const AuthProofHeader = "Reqgate-Authenticated"

// AuthProof is the value of AuthProofHeader: the hex SHA-256 of the api_key and the exact Authorization header
// the core authenticated, each length-prefixed. It binds the proof to that credential and that account, so a
// gateway compares it with the value computed from the request it sent. The gateway computes the same value
// (gateway/proof.go); TestAuthProofVector pins the format on both sides.
func AuthProof(apiKey, authorization string) string {
	h := sha256.New()
	var n [4]byte
	for _, s := range [...]string{apiKey, authorization} {
		binary.BigEndian.PutUint32(n[:], uint32(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	var sum [sha256.Size]byte
	return hex.EncodeToString(h.Sum(sum[:0]))
}
