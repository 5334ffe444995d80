package petstoretest

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
)

// A response echoes a credential when it repeats one that its request sent
// (the part of its Authorization header after the scheme, and the
// endpoint's key wherever the header holds it) where a credential leaks: in
// a header value, or in a string value of its JSON body (the body itself
// when it is not JSON), as a whole token, so that the key "key" does not
// occur in "Idempotency-Key" or "monkey". The members code, type and title
// of an error do not count: wantError requires them to be the API's own
// words for the error's code. Nor does the rest of the server's own text:
// when the credential occurs, the request is sent again with made-up
// credentials, and it echoes only when it occurs more often in the first
// answer than in the second, or the second has another status.

// echoedCredential returns the credential that x echoes and a description
// of where, or "", "" when it echoes none.
func (st *serverT) echoedCredential(x *exchange) (cred, desc string) {
	auth := x.req.Header.Get("Authorization")
	creds := sentCredentials(auth, st.e.APIKey)
	var ref *exchange // the answer to the request with made-up credentials
	for _, c := range creds {
		n, where := countToken(leakPlaces(x), c)
		if n == 0 {
			continue
		}
		if ref == nil {
			if ref = st.resendWith(x, replaceCredentials(auth, creds)); ref == nil {
				return "", ""
			}
		}
		if m, _ := countToken(leakPlaces(ref), c); ref.resp.StatusCode == x.resp.StatusCode && m >= n {
			continue // the server's own text, not the credential
		}
		return c, fmt.Sprintf("the answer repeats the credential %q of the request's header Authorization: %s; in %s", c, auth, snippet([]byte(where)))
	}
	return "", ""
}

// leakPlaces returns the places of x where a credential could leak: its
// header values, and the string values of its JSON body but for an error's
// code, type and title (or the body, when it is not JSON).
func leakPlaces(x *exchange) []string {
	var places []string
	for _, vs := range x.resp.Header {
		places = append(places, vs...)
	}
	var body any
	if json.Unmarshal(x.body, &body) != nil {
		return append(places, string(x.body))
	}
	if m, ok := body.(map[string]any); ok {
		delete(m, "code")
		delete(m, "type")
		delete(m, "title")
	}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			places = append(places, v)
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(body)
	return places
}

// sentCredentials returns the credentials of the Authorization header value
// auth, longest first: the part after the scheme and, when auth holds it
// anywhere, key.
func sentCredentials(auth, key string) []string {
	var creds []string
	if _, rest, ok := strings.Cut(strings.TrimSpace(auth), " "); ok {
		if rest = strings.TrimSpace(rest); rest != "" {
			creds = append(creds, rest)
		}
	}
	if key != "" && strings.Contains(auth, key) && !slices.Contains(creds, key) {
		creds = append(creds, key)
	}
	slices.SortStableFunc(creds, func(a, b string) int { return len(b) - len(a) })
	return creds
}

// replaceCredentials returns auth with each of creds, longest first,
// replaced by a credential that no server accepts or says on its own.
func replaceCredentials(auth string, creds []string) string {
	for _, c := range creds {
		auth = strings.ReplaceAll(auth, c, "petstoretest-"+rand.Text())
	}
	return auth
}

// resendWith sends x's request again with the Authorization header set to
// auth and returns the answer, or nil after reporting why it could not.
func (st *serverT) resendWith(x *exchange, auth string) *exchange {
	ctx, cancel := context.WithTimeout(st.t.Context(), requestTimeout)
	defer cancel()
	req := x.req.Clone(ctx)
	if x.req.GetBody != nil {
		req.Body, _ = x.req.GetBody() // a bytes.Reader's, which cannot fail
	}
	req.Header.Set("Authorization", auth)
	resp, err := st.client.Do(req)
	if err != nil {
		st.errorf("%s: resending the request with another credential, to tell an echoed credential from the server's own text: %v", x, err)
		return nil
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		st.errorf("%s: resending the request with another credential: reading the response: %v", x, err)
		return nil
	}
	return &exchange{req: req, resp: resp, body: body}
}

// countToken returns how often c occurs in places with no token character
// (of token68, RFC 9110, and of bearer tokens) right before or after it, and
// the first place where it does.
func countToken(places []string, c string) (n int, first string) {
	isToken := func(b byte) bool {
		return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' || strings.IndexByte("-._~+/=", b) >= 0
	}
	for _, s := range places {
		for i := 0; ; {
			j := strings.Index(s[i:], c)
			if j < 0 {
				break
			}
			start, end := i+j, i+j+len(c)
			if (start == 0 || !isToken(s[start-1])) && (end == len(s) || !isToken(s[end])) {
				n++
				first = cmp.Or(first, s)
			}
			i = start + 1
		}
	}
	return n, first
}
