package client

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// origin returns the origin of u as the client compares it: the scheme, the
// host in lower case and the port, the scheme's default port when u names
// none, as in "https://pets.example.com:443".
func origin(u *url.URL) string {
	scheme, port := strings.ToLower(u.Scheme), u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[scheme]
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// maxRedirects is how many redirects in a row the client follows when the
// caller's http.Client sets no CheckRedirect: net/http's default.
const maxRedirects = 10

// guard returns a copy of hc whose CheckRedirect refuses a redirect to any
// origin but the base URL's, and otherwise asks hc's own CheckRedirect, or
// applies net/http's default of at most ten redirects. hc itself is not
// changed.
//
// net/http keeps the Authorization header on a redirect to the same host
// name whatever its port and scheme, so without this check the API key
// would follow a redirect to another port, or from https to plain http.
func (c *Client) guard(hc *http.Client) *http.Client {
	g := *hc
	own := hc.CheckRedirect
	g.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if err := c.checkOrigin(req.URL); err != nil {
			return err
		}
		if own != nil {
			return own(req, via)
		}
		if len(via) >= maxRedirects {
			return fmt.Errorf("stopped after %d redirects", maxRedirects)
		}
		return nil
	}
	return &g
}

// checkOrigin returns an error wrapping ErrRedirectRefused unless u is at
// the base URL's origin.
func (c *Client) checkOrigin(u *url.URL) error {
	to := origin(u)
	if to == c.origin {
		return nil
	}
	why := "the client sends its requests, and the API key, to that origin only"
	if c.base.Scheme == "https" && strings.EqualFold(u.Scheme, "http") {
		why = "the client never follows https to http, which would send the request and the API key in clear text"
	}
	return fmt.Errorf("%w: the server redirects to %s, not the base URL's origin %s (scheme, host and port): %s",
		ErrRedirectRefused, cut(to), c.origin, why)
}
