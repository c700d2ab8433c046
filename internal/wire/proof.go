package wire

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
)

// AuthProofHeader is the response header by which the core tells a gateway that it authenticated the request's
// credential for the request's account. A gateway trusts a credential for cached reads only on this explicit
// word, never on a status code: the core answers some requests (an unknown version, a malformed path) before
// it authenticates anything, and those answers prove nothing. The gateway never relays it to a caller.
const AuthProofHeader = "Reqgate-Authenticated"

// AuthProofLen is the length of an AuthProofHeader value: a hex SHA-256.
const AuthProofLen = 2 * sha256.Size

// AppendAuthProof appends to dst the value of AuthProofHeader for the api_key apiKey and the exact Authorization
// header authorization that the core authenticated: the hex SHA-256 of the two, each prefixed by its length as
// four big-endian bytes. It binds the proof to that credential and that account, so a gateway compares it with
// the value computed from the request it sent. It allocates nothing when dst has room for AuthProofLen bytes and
// the two fit in proofStack; the gateway computes it for every answer to a verification.
func AppendAuthProof[K, A string | []byte](dst []byte, apiKey K, authorization A) []byte {
	// One call to Sum256 over a buffer on the stack: a hash.Hash from sha256.New is an interface whose Write
	// makes its argument escape, which would cost an allocation per string written.
	var stack [proofStack]byte
	in := binary.BigEndian.AppendUint32(stack[:0], uint32(len(apiKey)))
	in = append(in, apiKey...)
	in = binary.BigEndian.AppendUint32(in, uint32(len(authorization)))
	in = append(in, authorization...)
	sum := sha256.Sum256(in)
	return hex.AppendEncode(dst, sum[:])
}

// proofStack holds the input of a proof without an allocation for an api_key and a Basic credential of any
// usual length (an api_key is at most 128 bytes; a longer credential only costs one allocation).
const proofStack = 512

// AuthProof is AppendAuthProof as a string, for the core's response header.
func AuthProof(apiKey, authorization string) string {
	var b [AuthProofLen]byte
	return string(AppendAuthProof(b[:0], apiKey, authorization))
}
