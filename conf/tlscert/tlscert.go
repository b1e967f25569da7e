// Package tlscert makes a private certificate authority and the certificates
// signed by it that a TLS-enabled Temporal frontend and its clients need: a
// server certificate for the given hosts and a client certificate for mTLS.
// The production stack (infra/prod/stack.sh, STACK_TLS) and the TLS tests use
// it; a lab with its own PKI does not need it.
package tlscert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// Files are the PEM files Generate writes, by path.
type Files struct {
	CA, CAKey         string // the authority (its key signs the others)
	Server, ServerKey string // the frontend's certificate, for the hosts given
	Client, ClientKey string // a client certificate (CN "flsweep-client"), for mTLS
}

// Generate writes a new CA, a server certificate for hosts (DNS names or IP
// addresses) and a client certificate into dir (created 0700; keys 0600),
// valid for validFor from now.
func Generate(dir string, hosts []string, validFor time.Duration) (Files, error) {
	if len(hosts) == 0 {
		return Files{}, fmt.Errorf("tlscert: no hosts for the server certificate")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return Files{}, err
	}
	f := Files{
		CA: filepath.Join(dir, "ca.pem"), CAKey: filepath.Join(dir, "ca-key.pem"),
		Server: filepath.Join(dir, "server.pem"), ServerKey: filepath.Join(dir, "server-key.pem"),
		Client: filepath.Join(dir, "client.pem"), ClientKey: filepath.Join(dir, "client-key.pem"),
	}
	now := time.Now().Add(-time.Minute)
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Files{}, err
	}
	ca := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: "flsweep test CA", Organization: []string{"flsweep"}},
		NotBefore: now, NotAfter: now.Add(validFor), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return Files{}, err
	}
	if ca, err = x509.ParseCertificate(caDER); err != nil {
		return Files{}, err
	}
	if err := write(f.CA, f.CAKey, caDER, caKey); err != nil {
		return Files{}, err
	}
	srv := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: hosts[0], Organization: []string{"flsweep"}},
		NotBefore: now, NotAfter: now.Add(validFor),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			srv.IPAddresses = append(srv.IPAddresses, ip)
		} else {
			srv.DNSNames = append(srv.DNSNames, h)
		}
	}
	if err := sign(srv, ca, caKey, f.Server, f.ServerKey); err != nil {
		return Files{}, err
	}
	cli := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: "flsweep-client", Organization: []string{"flsweep"}},
		NotBefore: now, NotAfter: now.Add(validFor),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if err := sign(cli, ca, caKey, f.Client, f.ClientKey); err != nil {
		return Files{}, err
	}
	return f, nil
}

func sign(tmpl, ca *x509.Certificate, caKey *ecdsa.PrivateKey, certPath, keyPath string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return err
	}
	return write(certPath, keyPath, der, key)
}

func write(certPath, keyPath string, der []byte, key *ecdsa.PrivateKey) error {
	kb, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	if err := os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return err
	}
	return os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kb}), 0o600)
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return n
}
