package session

import (
	"fmt"
	"net"
	"net/url"
	"strings"

	"retrace/state"
)

// Endpoint is the model a session talks to: what the session records
// (model, base URL, the name of the key's variable), where requests go,
// and the key. The key never leaves memory.
type Endpoint struct {
	state.Endpoint
	// URL is where requests go: the recorded base URL, or the address
	// of a server this process started for it (the demo model).
	URL    string
	APIKey string
}

// endpointFor is the endpoint for a session that recorded rec.
func (c *Controller) endpointFor(rec state.Endpoint) (Endpoint, error) {
	if c.cfg.Resolve == nil {
		ep := Endpoint{Endpoint: state.Endpoint{Model: c.cfg.Model, BaseURL: c.cfg.BaseURL, KeyEnv: c.cfg.KeyEnv}, URL: c.cfg.BaseURL, APIKey: c.cfg.APIKey}
		return ep, nil
	}
	return c.cfg.Resolve(rec)
}

// KeyProblem says what to set when a request would need a key and there
// is none: only sending needs one, so a session can always be opened to
// read.
func (e Endpoint) KeyProblem() error {
	if e.APIKey != "" || !NeedsKey(e.URL) {
		return nil
	}
	env := e.KeyEnv
	if env == "" {
		env = "OPENAI_API_KEY"
	}
	return fmt.Errorf("%w for %s: set %s, pass --api-key, or name the variable with api_key_env in the config file (local servers such as Ollama need none)", ErrNoKey, e.BaseURL, env)
}

// NeedsKey reports whether an endpoint is remote: model servers on this
// machine or a private network usually need no key.
func NeedsKey(baseURL string) bool {
	u, err := url.Parse(baseURL)
	if err != nil {
		return true
	}
	host := u.Hostname()
	if host == "localhost" || strings.HasSuffix(host, ".localhost") || strings.HasSuffix(host, ".local") || host == "host.docker.internal" {
		return false
	}
	ip := net.ParseIP(host)
	return ip == nil || !(ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast())
}
