// Package certstest writes self-signed certificates and keys for tests of TLS listeners: an ECDSA P-256 key
// and a certificate for 127.0.0.1, ::1 and localhost, each with its own serial number so that a test can tell
// which one a server presented.
package certstest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Pair is a certificate and its key written to two PEM files.
type Pair struct {
	CertFile, KeyFile string
	Cert              *x509.Certificate
	CertPEM, KeyPEM   []byte
}

// Pool is a certificate pool trusting the pair's self-signed certificate, for a client's RootCAs.
func (p Pair) Pool() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(p.Cert)
	return pool
}

// Write creates a new key and a self-signed certificate named name and writes them as name.crt and name.key
// in dir.
func Write(tb testing.TB, dir, name string) Pair {
	tb.Helper()
	p := New(tb, name)
	p.CertFile, p.KeyFile = filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	if err := os.WriteFile(p.CertFile, p.CertPEM, 0o600); err != nil {
		tb.Fatalf("certstest: %v", err)
	}
	if err := os.WriteFile(p.KeyFile, p.KeyPEM, 0o600); err != nil {
		tb.Fatalf("certstest: %v", err)
	}
	return p
}

// New creates a new key and a self-signed certificate with common name name, valid for a day, in memory.
func New(tb testing.TB, name string) Pair {
	tb.Helper()
	return NewUntil(tb, name, time.Now().Add(24*time.Hour))
}

// NewUntil is New with a certificate valid until notAfter.
func NewUntil(tb testing.TB, name string, notAfter time.Time) Pair {
	tb.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatalf("certstest: generate key: %v", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		tb.Fatalf("certstest: serial: %v", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		tb.Fatalf("certstest: create certificate: %v", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		tb.Fatalf("certstest: parse certificate: %v", err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		tb.Fatalf("certstest: marshal key: %v", err)
	}
	return Pair{Cert: cert,
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder})}
}
