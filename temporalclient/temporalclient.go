// Package temporalclient is the one way the starter and the worker reach
// Temporal: address, namespace, TLS, mTLS and API key from the environment
// (Temporal's envconfig names) or flags, and a Dial whose errors name the
// setting to fix. It is the only package besides the Temporal adapters
// (workflows, activities, the main packages) that imports the SDK.
package temporalclient

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/flsweep/flsweep/conf"
)

// Environment variables of the Temporal client's TLS and API key: the names
// of Temporal's own envconfig (go.temporal.io/sdk/contrib/envconfig) and of
// the temporal CLI, so one environment serves our binaries and the CLI.
const (
	EnvTLS                        = "TEMPORAL_TLS"
	EnvTLSClientCertPath          = "TEMPORAL_TLS_CLIENT_CERT_PATH"
	EnvTLSClientKeyPath           = "TEMPORAL_TLS_CLIENT_KEY_PATH"
	EnvTLSServerCACertPath        = "TEMPORAL_TLS_SERVER_CA_CERT_PATH"
	EnvTLSServerName              = "TEMPORAL_TLS_SERVER_NAME"
	EnvTLSDisableHostVerification = "TEMPORAL_TLS_DISABLE_HOST_VERIFICATION"
	EnvAPIKey                     = "TEMPORAL_API_KEY"
)

// Config holds how to reach the Temporal frontend: address, namespace, TLS
// and API key. FromEnv fills it from the environment; Flags lets flags
// override that; Dial connects. The starter and the worker share it.
//
// As in Temporal's envconfig, TLS is on when TLS is "true", when any TLS
// file or the server name is set, or when an API key is set (Temporal Cloud),
// unless TLS is "false".
type Config struct {
	Address   string
	Namespace string

	TLS                     string // "", "true" or "false" (TEMPORAL_TLS)
	ClientCertPath          string // PEM client certificate, for mTLS
	ClientKeyPath           string // its PEM private key
	ServerCACertPath        string // PEM CA that signs the server's certificate (default: the system's roots)
	ServerName              string // name to verify in the server's certificate (default: the address's host)
	DisableHostVerification bool   // accept any server certificate (testing only)
	APIKey                  string // sent as "Authorization: Bearer <key>"
}

// FromEnv returns the client settings from the environment, with the
// embedded defaults for address and namespace.
func FromEnv() Config {
	skip, _ := strconv.ParseBool(os.Getenv(EnvTLSDisableHostVerification))
	return Config{
		Address:                 conf.Address(),
		Namespace:               conf.Namespace(),
		TLS:                     strings.ToLower(strings.TrimSpace(os.Getenv(EnvTLS))),
		ClientCertPath:          os.Getenv(EnvTLSClientCertPath),
		ClientKeyPath:           os.Getenv(EnvTLSClientKeyPath),
		ServerCACertPath:        os.Getenv(EnvTLSServerCACertPath),
		ServerName:              os.Getenv(EnvTLSServerName),
		DisableHostVerification: skip,
		APIKey:                  os.Getenv(EnvAPIKey),
	}
}

// Flags registers the flags that override the environment: --address,
// --namespace, --tls, --tls-client-cert-path, --tls-client-key-path,
// --tls-server-ca-cert-path, --tls-server-name,
// --tls-disable-host-verification and --api-key (the environment names,
// lower case, without TEMPORAL_). Call it on a Config from FromEnv, so
// that the environment gives the defaults.
func (c *Config) Flags(fs *flag.FlagSet) {
	fs.StringVar(&c.Address, "address", c.Address, "Temporal frontend host:port (env "+conf.EnvAddress+")")
	fs.StringVar(&c.Namespace, "namespace", c.Namespace, "Temporal namespace (env "+conf.EnvNamespace+")")
	fs.Var(tlsFlag{&c.TLS}, "tls", "connect with TLS; --tls=false forbids it (default: on when a TLS setting or an API key is given; env "+EnvTLS+")")
	fs.StringVar(&c.ClientCertPath, "tls-client-cert-path", c.ClientCertPath, "PEM client certificate for mTLS (env "+EnvTLSClientCertPath+")")
	fs.StringVar(&c.ClientKeyPath, "tls-client-key-path", c.ClientKeyPath, "PEM private key of the client certificate (env "+EnvTLSClientKeyPath+")")
	fs.StringVar(&c.ServerCACertPath, "tls-server-ca-cert-path", c.ServerCACertPath, "PEM CA certificate that signs the server's certificate; default: the system's roots (env "+EnvTLSServerCACertPath+")")
	fs.StringVar(&c.ServerName, "tls-server-name", c.ServerName, "name to verify in the server's certificate; default: the address's host (env "+EnvTLSServerName+")")
	fs.BoolVar(&c.DisableHostVerification, "tls-disable-host-verification", c.DisableHostVerification, "accept any server certificate: testing only (env "+EnvTLSDisableHostVerification+")")
	fs.StringVar(&c.APIKey, "api-key", c.APIKey, "API key, e.g. for Temporal Cloud; prefer the environment, which ps does not show (env "+EnvAPIKey+")")
}

// tlsFlag is --tls: a boolean flag (--tls, --tls=false) whose unset state
// differs from false.
type tlsFlag struct{ p *string }

func (f tlsFlag) String() string {
	if f.p == nil {
		return ""
	}
	return *f.p
}

func (f tlsFlag) Set(v string) error {
	b, err := strconv.ParseBool(v)
	if err != nil {
		return fmt.Errorf("want true or false")
	}
	*f.p = strconv.FormatBool(b)
	return nil
}

func (tlsFlag) IsBoolFlag() bool { return true }

// TLSEnabled reports whether the client connects with TLS.
func (c Config) TLSEnabled() (bool, error) {
	switch c.TLS {
	case "true", "1":
		return true, nil
	case "false", "0":
		return false, nil
	case "":
		return c.ClientCertPath != "" || c.ClientKeyPath != "" || c.ServerCACertPath != "" ||
			c.ServerName != "" || c.DisableHostVerification || c.APIKey != "", nil
	}
	return false, fmt.Errorf("%s (--tls) = %q: want true or false", EnvTLS, c.TLS)
}

// TLSConfig returns the client's TLS configuration, nil without TLS. Every
// error names the setting to fix.
func (c Config) TLSConfig() (*tls.Config, error) {
	on, err := c.TLSEnabled()
	if err != nil || !on {
		return nil, err
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: c.ServerName, InsecureSkipVerify: c.DisableHostVerification}
	switch {
	case c.ClientCertPath != "" && c.ClientKeyPath == "":
		return nil, fmt.Errorf("%s (--tls-client-cert-path) is set but %s (--tls-client-key-path) is not: mTLS needs both", EnvTLSClientCertPath, EnvTLSClientKeyPath)
	case c.ClientCertPath == "" && c.ClientKeyPath != "":
		return nil, fmt.Errorf("%s (--tls-client-key-path) is set but %s (--tls-client-cert-path) is not: mTLS needs both", EnvTLSClientKeyPath, EnvTLSClientCertPath)
	case c.ClientCertPath != "":
		for _, f := range []struct{ env, flag, path string }{
			{EnvTLSClientCertPath, "--tls-client-cert-path", c.ClientCertPath},
			{EnvTLSClientKeyPath, "--tls-client-key-path", c.ClientKeyPath},
		} {
			if _, err := os.Stat(f.path); err != nil {
				return nil, fmt.Errorf("%s (%s): %w", f.env, f.flag, err)
			}
		}
		cert, err := tls.LoadX509KeyPair(c.ClientCertPath, c.ClientKeyPath)
		if err != nil {
			return nil, fmt.Errorf("%s / %s (--tls-client-cert-path / --tls-client-key-path): not a PEM certificate and its key: %w",
				EnvTLSClientCertPath, EnvTLSClientKeyPath, err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	if c.ServerCACertPath != "" {
		b, err := os.ReadFile(c.ServerCACertPath)
		if err != nil {
			return nil, fmt.Errorf("%s (--tls-server-ca-cert-path): %w", EnvTLSServerCACertPath, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(b) {
			return nil, fmt.Errorf("%s (--tls-server-ca-cert-path) = %s: no PEM certificate in it", EnvTLSServerCACertPath, c.ServerCACertPath)
		}
		cfg.RootCAs = pool
	}
	return cfg, nil
}

// Options returns the SDK's client options.
func (c Config) Options(logger log.Logger) (client.Options, error) {
	if c.Address == "" {
		return client.Options{}, fmt.Errorf("the Temporal address is empty: set %s or --address to host:port", conf.EnvAddress)
	}
	tlsCfg, err := c.TLSConfig()
	if err != nil {
		return client.Options{}, err
	}
	o := client.Options{HostPort: c.Address, Namespace: c.Namespace, Logger: logger}
	if tlsCfg != nil {
		o.ConnectionOptions.TLS = tlsCfg
	} else {
		o.ConnectionOptions.TLSDisabled = true
	}
	if c.APIKey != "" {
		o.Credentials = client.NewAPIKeyStaticCredentials(c.APIKey)
	}
	return o, nil
}

// Dial connects to Temporal (the SDK checks the server at once), and turns
// a failure into an error that names the setting to fix where the cause is
// recognisable: a TLS mismatch, the server's CA or name, the client
// certificate, the API key. logger may be nil (the SDK's default).
func (c Config) Dial(ctx context.Context, logger log.Logger) (client.Client, error) {
	o, err := c.Options(logger)
	if err != nil {
		return nil, err
	}
	cl, err := client.DialContext(ctx, o)
	if err != nil {
		return nil, c.explain(err)
	}
	// The SDK's check (GetSystemInfo) passes every authorizer; a namespace
	// call shows at once whether the credentials and the namespace are good.
	if _, err := cl.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: c.Namespace}); err != nil {
		cl.Close()
		var nf *serviceerror.NamespaceNotFound
		if errors.As(err, &nf) {
			return nil, &DialError{Address: c.Address, Namespace: c.Namespace, Err: err,
				Hint: fmt.Sprintf("namespace %s does not exist on this server: create it (infra/server/init.sh does) or set %s (--namespace)", c.Namespace, conf.EnvNamespace)}
		}
		return nil, c.explain(err)
	}
	return cl, nil
}

// DialError is a failed Dial: where, why (Hint, naming the setting to fix;
// may be empty) and the SDK's error.
type DialError struct {
	Address, Namespace string
	Hint               string
	Err                error
}

func (e *DialError) Error() string {
	msg := fmt.Sprintf("connect to Temporal at %s (namespace %s): %v", e.Address, e.Namespace, e.Err)
	if e.Hint != "" {
		msg += "\n  " + e.Hint
	}
	return msg
}

func (e *DialError) Unwrap() error { return e.Err }

func (c Config) explain(err error) error {
	s := err.Error()
	tlsOn, _ := c.TLSEnabled()
	has := func(subs ...string) bool {
		for _, x := range subs {
			if strings.Contains(s, x) {
				return true
			}
		}
		return false
	}
	var hint string
	var unknownAuthority x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var denied *serviceerror.PermissionDenied
	switch {
	case errors.As(err, &unknownAuthority) || has("certificate signed by unknown authority"):
		if c.ServerCACertPath == "" {
			hint = fmt.Sprintf("the server's certificate is not signed by a CA this machine trusts: set %s (--tls-server-ca-cert-path) to the CA that signed it", EnvTLSServerCACertPath)
		} else {
			hint = fmt.Sprintf("the server's certificate is not signed by the CA in %s (--tls-server-ca-cert-path) = %s: give the CA that signed it", EnvTLSServerCACertPath, c.ServerCACertPath)
		}
	case errors.As(err, &hostname) || has("certificate is valid for", "certificate is not valid for any names"):
		hint = fmt.Sprintf("the server's certificate does not name the host dialled (%s): set %s (--tls-server-name) to a name in the certificate", c.serverName(), EnvTLSServerName)
	case has("certificate required"):
		hint = fmt.Sprintf("the server requires a client certificate (mTLS): set %s and %s (--tls-client-cert-path, --tls-client-key-path)", EnvTLSClientCertPath, EnvTLSClientKeyPath)
	case has("tls: bad certificate", "tls: unknown certificate authority", "tls: unknown certificate", "tls: certificate expired"):
		hint = fmt.Sprintf("the server refused the client certificate in %s (--tls-client-cert-path) = %s: give one signed by the CA the server trusts for clients", EnvTLSClientCertPath, c.ClientCertPath)
	case has("first record does not look like a TLS handshake"):
		hint = fmt.Sprintf("the server does not speak TLS: set %s=false (--tls=false), or remove the TLS settings and the API key", EnvTLS)
	case tlsOn && c.ClientCertPath == "" && has("broken pipe", "connection reset by peer", "EOF"):
		// TLS 1.3: the server checks the client certificate after the
		// handshake; the client sees its alert, or only the closed socket.
		hint = fmt.Sprintf("the server closed the connection after the TLS handshake: it may require a client certificate (mTLS): set %s and %s (--tls-client-cert-path, --tls-client-key-path)", EnvTLSClientCertPath, EnvTLSClientKeyPath)
	case tlsOn && has("broken pipe", "connection reset by peer", "EOF"):
		hint = fmt.Sprintf("the server closed the connection after the TLS handshake: it may not trust the client certificate in %s (--tls-client-cert-path) = %s: give one signed by the CA the server trusts for clients", EnvTLSClientCertPath, c.ClientCertPath)
	case !tlsOn && has("server preface", "connection reset by peer", "EOF"):
		hint = fmt.Sprintf("the server may require TLS: set %s=true (--tls) and %s (--tls-server-ca-cert-path) if its CA is private", EnvTLS, EnvTLSServerCACertPath)
	case errors.As(err, &denied) || status.Code(err) == codes.Unauthenticated || has("Unauthenticated", "PermissionDenied", "Request unauthorized"):
		if c.APIKey == "" {
			hint = fmt.Sprintf("the server wants credentials: set %s (--api-key)", EnvAPIKey)
		} else {
			hint = fmt.Sprintf("the server refused the API key in %s (--api-key): check the key and its access to namespace %s", EnvAPIKey, c.Namespace)
		}
	case has("connection refused", "DeadlineExceeded", "context deadline exceeded"):
		hint = fmt.Sprintf("is the server running at %s? `make up` starts a local dev server, `make prod-up` the production stack; %s (--address) names another", c.Address, conf.EnvAddress)
	}
	return &DialError{Address: c.Address, Namespace: c.Namespace, Hint: hint, Err: err}
}

func (c Config) serverName() string {
	if c.ServerName != "" {
		return c.ServerName
	}
	host := c.Address
	if i := strings.LastIndex(host, ":"); i >= 0 {
		host = host[:i]
	}
	return strings.Trim(host, "[]")
}
