package temporalclient

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flsweep/flsweep/conf"
	"github.com/flsweep/flsweep/conf/tlscert"
)

// TestClientTLSSettings: TLS turns on as in Temporal's envconfig, and every
// bad setting is an error that names it (environment and flag).
func TestClientTLSSettings(t *testing.T) {
	certs, err := tlscert.Generate(t.TempDir(), []string{"localhost"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	notPEM := filepath.Join(t.TempDir(), "x.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := Config{Address: "localhost:7233", Namespace: "default"}
	for _, tc := range []struct {
		name    string
		edit    func(c *Config)
		tls     bool
		wantErr []string // substrings of the error; nil: no error
	}{
		{"plain", func(c *Config) {}, false, nil},
		{"tls flag", func(c *Config) { c.TLS = "true" }, true, nil},
		{"api key turns TLS on", func(c *Config) { c.APIKey = "k" }, true, nil},
		{"api key without TLS", func(c *Config) { c.APIKey = "k"; c.TLS = "false" }, false, nil},
		{"CA turns TLS on", func(c *Config) { c.ServerCACertPath = certs.CA }, true, nil},
		{"mTLS", func(c *Config) { c.ClientCertPath, c.ClientKeyPath = certs.Client, certs.ClientKey }, true, nil},
		{"bad TLS value", func(c *Config) { c.TLS = "yes please" }, false, []string{"TEMPORAL_TLS", "--tls"}},
		{"cert without key", func(c *Config) { c.ClientCertPath = certs.Client }, true, []string{"TEMPORAL_TLS_CLIENT_KEY_PATH", "--tls-client-key-path"}},
		{"key without cert", func(c *Config) { c.ClientKeyPath = certs.ClientKey }, true, []string{"TEMPORAL_TLS_CLIENT_CERT_PATH", "--tls-client-cert-path"}},
		{"missing cert file", func(c *Config) { c.ClientCertPath, c.ClientKeyPath = "/nonexistent.pem", certs.ClientKey }, true, []string{"TEMPORAL_TLS_CLIENT_CERT_PATH", "no such file"}},
		{"key of another cert", func(c *Config) { c.ClientCertPath, c.ClientKeyPath = certs.Client, certs.ServerKey }, true, []string{"TEMPORAL_TLS_CLIENT_CERT_PATH", "private key does not match"}},
		{"missing CA file", func(c *Config) { c.ServerCACertPath = "/nonexistent-ca.pem" }, true, []string{"TEMPORAL_TLS_SERVER_CA_CERT_PATH", "--tls-server-ca-cert-path", "no such file"}},
		{"CA not PEM", func(c *Config) { c.ServerCACertPath = notPEM }, true, []string{"TEMPORAL_TLS_SERVER_CA_CERT_PATH", "no PEM certificate"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := base
			tc.edit(&c)
			o, err := c.Options(nil)
			if tc.wantErr != nil {
				if err == nil {
					t.Fatalf("no error, want one naming %v", tc.wantErr)
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := o.ConnectionOptions.TLS != nil; got != tc.tls {
				t.Errorf("TLS on = %v, want %v", got, tc.tls)
			}
			if !tc.tls && !o.ConnectionOptions.TLSDisabled {
				t.Error("TLS off but not disabled: an API key would turn it on in the SDK")
			}
			if (c.APIKey != "") != (o.Credentials != nil) {
				t.Errorf("credentials %v for API key %q", o.Credentials, c.APIKey)
			}
		})
	}
}

// TestFromEnv reads Temporal's envconfig names, and flags override them.
func TestFromEnv(t *testing.T) {
	t.Setenv(conf.EnvAddress, "h:1")
	t.Setenv(conf.EnvNamespace, "ns")
	t.Setenv(EnvTLS, "true")
	t.Setenv(EnvTLSClientCertPath, "c.pem")
	t.Setenv(EnvTLSClientKeyPath, "k.pem")
	t.Setenv(EnvTLSServerCACertPath, "ca.pem")
	t.Setenv(EnvTLSServerName, "srv")
	t.Setenv(EnvTLSDisableHostVerification, "true")
	t.Setenv(EnvAPIKey, "key")
	c := FromEnv()
	want := Config{Address: "h:1", Namespace: "ns", TLS: "true", ClientCertPath: "c.pem", ClientKeyPath: "k.pem",
		ServerCACertPath: "ca.pem", ServerName: "srv", DisableHostVerification: true, APIKey: "key"}
	if c != want {
		t.Fatalf("FromEnv = %+v, want %+v", c, want)
	}
	fs := flagSet()
	c.Flags(fs)
	if err := fs.Parse([]string{"--address", "x:2", "--tls-server-name", "other", "--api-key", "k2", "--tls=0"}); err != nil {
		t.Fatal(err)
	}
	if c.Address != "x:2" || c.ServerName != "other" || c.APIKey != "k2" || c.TLS != "false" || c.Namespace != "ns" {
		t.Errorf("after flags: %+v", c)
	}
}

func flagSet() *flag.FlagSet { return flag.NewFlagSet("test", flag.ContinueOnError) }

func TestTLSFlagAlone(t *testing.T) {
	var c Config
	fs := flagSet()
	c.Flags(fs)
	if err := fs.Parse([]string{"--tls"}); err != nil {
		t.Fatal(err)
	}
	if on, err := c.TLSEnabled(); !on || err != nil {
		t.Fatalf("--tls: TLS on = %v, %v", on, err)
	}
}
