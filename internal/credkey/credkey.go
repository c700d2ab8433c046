// Package credkey derives the key under which a verified Basic credential is remembered: an HMAC-SHA256,
// under a random per-process key, of the api_key, the username and the password. A store of such keys never
// holds a password, and a memory dump does not give one away; the random key makes a digest useless outside
// the process that made it. The core and the gateway both remember credentials this way.
package credkey

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"sync"
	"unsafe"
)

// Size is the length of a digest.
const Size = sha256.Size

// Hasher computes digests under its own random key. Safe for concurrent use; a digest costs no allocation,
// as it sits on the gateway's cache-hit path.
type Hasher struct {
	states sync.Pool // *state
}

// state is a pooled HMAC with the buffers its writes need, so that nothing handed to the hash.Hash
// interface escapes to the heap per call.
type state struct {
	mac hash.Hash
	len [4]byte
	sum []byte
}

// New returns a Hasher with a fresh random key.
func New() *Hasher {
	key := make([]byte, Size)
	rand.Read(key) // never fails: crypto/rand crashes the program rather than return an error
	h := &Hasher{}
	h.states.New = func() any { return &state{mac: hmac.New(sha256.New, key), sum: make([]byte, 0, Size)} }
	return h
}

// Sum is the digest of a credential. Each part is prefixed with its length, so that no two different
// credentials share an input (moving characters from the username to the password changes the digest).
func (h *Hasher) Sum(apiKey, user, pass string) [Size]byte {
	st := h.states.Get().(*state)
	st.mac.Reset()
	st.write(apiKey)
	st.write(user)
	st.write(pass)
	st.sum = st.mac.Sum(st.sum[:0])
	var d [Size]byte
	copy(d[:], st.sum)
	h.states.Put(st)
	return d
}

// SumBytes is Sum of a username and password held as bytes (a decoded Authorization header), without
// copying them.
func (h *Hasher) SumBytes(apiKey string, user, pass []byte) [Size]byte {
	// The strings live only for the call: hash.Hash does not keep what it is given.
	return h.Sum(apiKey, unsafe.String(unsafe.SliceData(user), len(user)), unsafe.String(unsafe.SliceData(pass), len(pass)))
}

func (st *state) write(s string) {
	binary.BigEndian.PutUint32(st.len[:], uint32(len(s)))
	st.mac.Write(st.len[:])
	st.mac.Write(unsafe.Slice(unsafe.StringData(s), len(s))) // hash.Hash does not keep or change what it is given
}
