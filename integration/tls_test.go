package integration

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flsweep/flsweep/conf"
	"github.com/flsweep/flsweep/conf/tlscert"
	"github.com/flsweep/flsweep/temporalclient"
)

// TestServerTLS runs the Temporal server built from go.temporal.io/server
// (the production stack's, STACK_TLS) with TLS on its frontend, on loopback,
// and dials it as the starter and the worker do (temporalclient.Config):
//   - mTLS: the right client certificate and CA connect, and the worker and
//     starter binaries connect from the environment alone;
//   - no client certificate, a wrong CA, a wrong server name, a client
//     certificate of another CA, and no TLS at all each fail with an error
//     naming the setting to fix;
//   - then, with plain TLS and the server's JWT authorizer on, an API key
//     reaches the server: a key it can verify connects; no key, a key
//     signed by another issuer, and a key for another namespace are refused,
//     and the error names TEMPORAL_API_KEY.
func TestServerTLS(t *testing.T) {
	requireEnv(t)
	s := newProdStack(t, "STACK_TLS=mtls", "STACK_WORKERS=0")
	s.mustSh("up")
	tlsDir := filepath.Join(s.dir, "tls")
	good := temporalclient.Config{Address: s.address(), Namespace: "default",
		ClientCertPath: filepath.Join(tlsDir, "client.pem"), ClientKeyPath: filepath.Join(tlsDir, "client-key.pem"),
		ServerCACertPath: filepath.Join(tlsDir, "ca.pem"), ServerName: "localhost"}
	other, err := tlscert.Generate(t.TempDir(), []string{"localhost"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	dial := func(c temporalclient.Config) error {
		cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		cl, err := c.Dial(cctx, quiet{})
		if err == nil {
			cl.Close()
		}
		return err
	}
	if err := dial(good); err != nil {
		t.Fatalf("mTLS with the right certificates: %v", err)
	}
	noServerName := good
	noServerName.ServerName = "" // 127.0.0.1 is in the certificate too
	if err := dial(noServerName); err != nil {
		t.Errorf("mTLS by IP address: %v", err)
	}
	for _, tc := range []struct {
		name string
		edit func(c *temporalclient.Config)
		want string // the setting the error must name
	}{
		{"no client certificate", func(c *temporalclient.Config) { c.ClientCertPath, c.ClientKeyPath = "", "" }, "TEMPORAL_TLS_CLIENT_CERT_PATH"},
		{"client certificate of another CA", func(c *temporalclient.Config) { c.ClientCertPath, c.ClientKeyPath = other.Client, other.ClientKey }, "TEMPORAL_TLS_CLIENT_CERT_PATH"},
		{"wrong CA", func(c *temporalclient.Config) { c.ServerCACertPath = other.CA }, "TEMPORAL_TLS_SERVER_CA_CERT_PATH"},
		{"no CA (system roots)", func(c *temporalclient.Config) { c.ServerCACertPath = "" }, "TEMPORAL_TLS_SERVER_CA_CERT_PATH"},
		{"wrong server name", func(c *temporalclient.Config) { c.ServerName = "temporal.example.org" }, "TEMPORAL_TLS_SERVER_NAME"},
		{"no TLS", func(c *temporalclient.Config) { *c = temporalclient.Config{Address: c.Address, Namespace: c.Namespace} }, "TEMPORAL_TLS"},
	} {
		c := good
		tc.edit(&c)
		err := dial(c)
		if err == nil {
			t.Errorf("%s: connected, want an error", tc.name)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: the error does not name %s:\n%v", tc.name, tc.want, err)
		} else {
			t.Logf("%s: %v", tc.name, err)
		}
	}

	// The binaries, configured by the environment alone (Temporal's names).
	envs := []string{
		"TEMPORAL_ADDRESS=" + s.address(), "TEMPORAL_NAMESPACE=default",
		"TEMPORAL_TLS_CLIENT_CERT_PATH=" + good.ClientCertPath, "TEMPORAL_TLS_CLIENT_KEY_PATH=" + good.ClientKeyPath,
		"TEMPORAL_TLS_SERVER_CA_CERT_PATH=" + good.ServerCACertPath, "TEMPORAL_TLS_SERVER_NAME=localhost",
	}
	worker := exec.Command(filepath.Join(binDir, "worker"), "--queue", "tls-test", "--blob", conf.DirURL(t.TempDir()), "--data-dir", dataDir)
	worker.Env = append(os.Environ(), envs...)
	logPath := filepath.Join(t.TempDir(), "worker.log")
	wlog, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer wlog.Close()
	worker.Stdout, worker.Stderr = wlog, wlog
	if err := worker.Start(); err != nil {
		t.Fatal(err)
	}
	logged := func() string { b, _ := os.ReadFile(logPath); return string(b) }
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(logged(), "serving queue") && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
	}
	_ = worker.Process.Signal(os.Interrupt)
	_ = worker.Wait()
	if !strings.Contains(logged(), "serving queue") {
		t.Errorf("the worker did not connect over mTLS from the environment:\n%s", logged())
	}
	st := exec.Command(filepath.Join(binDir, "starter"), "sweep", "status", "no-such-sweep")
	st.Env = append(os.Environ(), envs...)
	out, _ := st.CombinedOutput()
	if strings.Contains(string(out), "connect to Temporal") {
		t.Errorf("the starter did not connect over mTLS from the environment:\n%s", out)
	}
	// Without the client certificate, the worker exits naming the setting.
	bad := exec.Command(filepath.Join(binDir, "worker"), "--queue", "tls-test", "--blob", conf.DirURL(t.TempDir()), "--data-dir", dataDir,
		"--tls-client-cert-path", "", "--tls-client-key-path", "")
	bad.Env = append(os.Environ(), envs...)
	if out, err := bad.CombinedOutput(); err == nil || !strings.Contains(string(out), "TEMPORAL_TLS_CLIENT_CERT_PATH") {
		t.Errorf("worker without a client certificate: %v\n%s", err, out)
	}

	// Plain TLS and API keys: restart the server with the JWT authorizer,
	// which verifies keys against a JWKS file.
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	otherKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	jwks := filepath.Join(s.dir, "jwks.json")
	writeJWKS(t, jwks, "k1", &key.PublicKey)
	admin := signJWT(t, key, "k1", []string{"temporal-system:admin", "default:admin"})
	s.extra = append(s.extra, "STACK_TLS=1", "TEMPORAL_AUTH_AUTHORIZER=default", "TEMPORAL_AUTH_CLAIM_MAPPER=default",
		"TEMPORAL_JWT_KEY_SOURCE1=file://"+jwks,
		// The stack's own CLI calls (namespace, search attributes) need a key now.
		"TEMPORAL_API_KEY="+admin)
	s.mustSh("restart-server")
	keyed := temporalclient.Config{Address: s.address(), Namespace: "default", ServerCACertPath: good.ServerCACertPath,
		ServerName: "localhost", APIKey: admin}
	if err := dial(keyed); err != nil {
		t.Fatalf("TLS with a valid API key: %v", err)
	}
	for _, tc := range []struct {
		name, key string
	}{
		{"no API key", ""},
		{"API key of another issuer", signJWT(t, otherKey, "k1", []string{"temporal-system:admin", "default:admin"})},
		{"API key for another namespace", signJWT(t, key, "k1", []string{"other:admin"})},
		{"not a JWT", "not-a-key"},
	} {
		c := keyed
		c.APIKey = tc.key
		if tc.key == "" {
			c.TLS = "true" // still TLS, only no key
		}
		err := dial(c)
		if err == nil {
			t.Errorf("%s: connected, want a refusal", tc.name)
			continue
		}
		if !strings.Contains(err.Error(), "TEMPORAL_API_KEY") {
			t.Errorf("%s: the error does not name TEMPORAL_API_KEY:\n%v", tc.name, err)
		} else {
			t.Logf("%s: %v", tc.name, err)
		}
	}
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func writeJWKS(t *testing.T, path, kid string, pub *rsa.PublicKey) {
	t.Helper()
	jwk := map[string]any{"keys": []map[string]string{{
		"kty": "RSA", "kid": kid, "alg": "RS256", "use": "sig",
		"n": b64(pub.N.Bytes()), "e": b64(big.NewInt(int64(pub.E)).Bytes()),
	}}}
	b, err := json.Marshal(jwk)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// signJWT makes an RS256 JWT with Temporal's permissions claim.
func signJWT(t *testing.T, key *rsa.PrivateKey, kid string, permissions []string) string {
	t.Helper()
	h, _ := json.Marshal(map[string]string{"alg": "RS256", "typ": "JWT", "kid": kid})
	c, _ := json.Marshal(map[string]any{"sub": "flsweep-test", "permissions": permissions,
		"iat": time.Now().Unix(), "exp": time.Now().Add(time.Hour).Unix()})
	msg := b64(h) + "." + b64(c)
	sum := sha256.Sum256([]byte(msg))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	return msg + "." + b64(sig)
}
