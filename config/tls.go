package config

import "crypto/tls"

// tls checks server.tls_cert_file and server.tls_key_file: both or neither, only for a role with a gateway,
// and a readable certificate and key that belong together, so that a bad pair stops the start instead of
// the first handshake.
func (k *checker) tls(role, certFile, keyFile string) {
	switch {
	case certFile == "" && keyFile == "":
		return
	case certFile == "":
		k.fail("server.tls_cert_file", "must be set with server.tls_key_file")
		return
	case keyFile == "":
		k.fail("server.tls_key_file", "must be set with server.tls_cert_file")
		return
	case role == RoleCore:
		k.fail("server.tls_cert_file", "the core role serves plain HTTP to its gateways; TLS is terminated by the gateway (roles serve and gateway)")
		return
	}
	if _, err := tls.LoadX509KeyPair(certFile, keyFile); err != nil {
		k.fail("server.tls_cert_file", "with server.tls_key_file: %v", err)
	}
}
