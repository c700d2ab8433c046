// Package certs holds the certificate and key the gateway's public listener presents, and swaps them for the
// files' new contents on Reload without dropping a connection: every handshake asks the Holder for the pair
// current at that moment (tls.Config.GetCertificate), so connections already open keep theirs and new ones get
// the new pair.
package certs

import (
	"crypto/tls"
	"errors"
	"fmt"
	"sync/atomic"
)

// Holder is a certificate and its key, read from two PEM files. It is safe for concurrent use: Reload may run
// while handshakes read the current pair.
type Holder struct {
	certFile, keyFile string
	cur               atomic.Pointer[tls.Certificate]
}

// Load reads the certificate chain and the private key from two PEM files. The key must match the chain's
// first certificate.
func Load(certFile, keyFile string) (*Holder, error) {
	if certFile == "" || keyFile == "" {
		return nil, errors.New("certs: both a certificate file and a key file are needed")
	}
	h := &Holder{certFile: certFile, keyFile: keyFile}
	if err := h.Reload(); err != nil {
		return nil, err
	}
	return h, nil
}

// Reload reads the two files again and, when they hold a valid pair, serves it to the handshakes that start
// from then on. When they do not (a file missing, unreadable, or the certificate and key replaced one at a
// time and not matching yet), the pair loaded before stays in use and the error says why.
func (h *Holder) Reload() error {
	pair, err := tls.LoadX509KeyPair(h.certFile, h.keyFile)
	if err != nil {
		return fmt.Errorf("certs: load %s and %s: %w", h.certFile, h.keyFile, err)
	}
	h.cur.Store(&pair)
	return nil
}

// Certificate is the pair in use; its Leaf is the parsed first certificate (subject, expiry).
func (h *Holder) Certificate() *tls.Certificate { return h.cur.Load() }

// TLSConfig is the server configuration of the public listener, presenting the Holder's current pair.
//
// TLS 1.2 is the oldest version accepted (1.0 and 1.1 are deprecated by RFC 8996). For TLS 1.2 the cipher
// suites are the ECDHE ones with an AEAD (AES-GCM, ChaCha20-Poly1305): Go's default list also offers ECDHE
// suites with AES-CBC and HMAC-SHA1, which are left out here. TLS 1.3 suites are not configurable in Go and
// are all AEADs. Curve preferences (hybrid post-quantum X25519MLKEM768 first) and session tickets are Go's
// defaults. NextProtos offers only http/1.1: the server behind it speaks no HTTP/2.
func (h *Holder) TLSConfig() *tls.Config {
	return &tls.Config{
		MinVersion:   tls.VersionTLS12,
		CipherSuites: CipherSuites(),
		NextProtos:   []string{"http/1.1"},
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			return h.cur.Load(), nil
		},
	}
}

// CipherSuites are the TLS 1.2 cipher suites TLSConfig allows: forward secret (ECDHE) with an AEAD.
func CipherSuites() []uint16 {
	return []uint16{
		tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
		tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384, tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
		tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256, tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
	}
}
