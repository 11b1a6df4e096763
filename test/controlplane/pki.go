package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pki is the plane's own certificate authority and what it signed, as files under one folder.
type pki struct {
	dir                   string
	caCert, caKey         string
	serverCert, serverKey string
	adminCert, adminKey   string
	saPublic, saPrivate   string
	ca                    *x509.Certificate
	caSigner              *ecdsa.PrivateKey
}

func newPKI(dir string) *pki {
	p := func(name string) string { return filepath.Join(dir, name) }
	return &pki{dir: dir,
		caCert: p("ca.crt"), caKey: p("ca.key"),
		serverCert: p("apiserver.crt"), serverKey: p("apiserver.key"),
		adminCert: p("admin.crt"), adminKey: p("admin.key"),
		saPublic: p("sa.pub"), saPrivate: p("sa.key")}
}

// generate writes a fresh CA, the API server's serving certificate for loopback, an admin
// client certificate (group system:masters) and the service-account signing key.
func (p *pki) generate() error {
	if err := os.MkdirAll(p.dir, 0o700); err != nil {
		return err
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	now := time.Now().Add(-time.Hour)
	caTmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: "gpuplane-test-plane-ca"},
		NotBefore: now, NotAfter: now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true, IsCA: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	p.ca, err = x509.ParseCertificate(caDER)
	if err != nil {
		return err
	}
	p.caSigner = caKey
	if err := writeCertKey(p.caCert, p.caKey, caDER, caKey); err != nil {
		return err
	}
	server := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: "kube-apiserver"},
		NotBefore: now, NotAfter: now.Add(365 * 24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:    []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.0.0.1")},
	}
	if err := p.sign(server, p.serverCert, p.serverKey); err != nil {
		return err
	}
	admin := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: "admin", Organization: []string{"system:masters"}},
		NotBefore:    now, NotAfter: now.Add(365 * 24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if err := p.sign(admin, p.adminCert, p.adminKey); err != nil {
		return err
	}
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	return writeKeyPair(p.saPublic, p.saPrivate, saKey)
}

func (p *pki) sign(tmpl *x509.Certificate, certFile, keyFile string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &key.PublicKey, p.caSigner)
	if err != nil {
		return err
	}
	return writeCertKey(certFile, keyFile, der, key)
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	return n
}

func writeCertKey(certFile, keyFile string, der []byte, key *ecdsa.PrivateKey) error {
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		return err
	}
	return writePrivate(keyFile, key)
}

func writeKeyPair(pubFile, privFile string, key *ecdsa.PrivateKey) error {
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return err
	}
	if err := os.WriteFile(pubFile, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o600); err != nil {
		return err
	}
	return writePrivate(privFile, key)
}

func writePrivate(file string, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	return os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), 0o600)
}

// randomToken returns a 32-hex-digit bearer token.
func randomToken() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("crypto/rand: %v", err))
	}
	return hex.EncodeToString(b)
}
