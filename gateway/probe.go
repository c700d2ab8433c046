package gateway

import (
	"errors"
	"net/url"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/reqgate/reqgate/config"
)

// In probe mode (Options.Verify) the upstream is any implementation of the interface, which sends no proof
// header: a credential is trusted for an account only when the upstream answers 2xx to a GET of the account's
// VerifyPath (a route it always serves and always authenticates) carrying that credential and nothing else.
// The route of the caller's request is never the question, since an implementation may answer a route before
// it authenticates anything (an unknown version, a malformed path): only the fixed path's 2xx proves.

// errProbeFailed is a 5xx answer to a probe: the upstream could not say whether the credential is good.
var errProbeFailed = errors.New("the upstream answered the credential check with a server error")

func (g *Gateway) probing() bool { return g.opt.Verify == config.VerifyProbe }

// validVerifyPath reports whether p is a probe path: absolute, naming the account as {key}, with nothing that
// would make the substituted path mean something else.
func validVerifyPath(p string) bool {
	return strings.HasPrefix(p, "/") && strings.Contains(p, "{key}") && !strings.ContainsAny(p, "?#% \t\r\n\x00")
}

// verifyURI is the upstream URI of the question that verifies a credential of apiKey: in proof mode the
// account's base (base), in probe mode its VerifyPath.
func (g *Gateway) verifyURI(base, apiKey string) string {
	if !g.probing() || apiKey == "" {
		return g.up.prefix + base
	}
	return g.up.prefix + strings.ReplaceAll(g.opt.VerifyPath, "{key}", url.PathEscape(apiKey))
}

// trusts reports whether the upstream's answer to a verification proves auth for apiKey: the core's proof
// header in proof mode, a 2xx in probe mode.
func (g *Gateway) trusts(resp *fasthttp.Response, apiKey string, auth []byte) bool {
	if g.probing() {
		s := resp.StatusCode()
		return s >= 200 && s < 300
	}
	return proves(resp, apiKey, auth)
}
