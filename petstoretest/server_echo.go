package petstoretest

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
)

// A response echoes a credential when it repeats, as a credential, a
// credential that its request sent. The check is built so that it does not
// misreport a key that is also a word of the server's own messages, such as
// the key "key" in "an API key is required":
//
//   - Only what the request sent counts: the credentials of its
//     Authorization header (the part after the scheme, or the endpoint's key
//     wherever the header holds it). A request without one echoes nothing.
//   - An occurrence counts only as a whole token: not preceded or followed by
//     a character that a token may hold, so the key "key" does not occur in
//     "keys" or "monkey".
//   - The server's own text does not count: when the credential occurs, the
//     same request is sent again with the credential replaced by one that the
//     suite makes up, and the credential echoes only when it occurs more often
//     in the first body than in the second. When the second answer has
//     another status (because the first request was authorized and the made-up
//     credential is not), the bodies cannot be compared, and any occurrence
//     counts.

// echoedCredential returns the credential that x's body echoes and a
// description of the echo that shows the body, or "", "" when it echoes
// none.
func (st *serverT) echoedCredential(x *exchange) (cred, desc string) {
	auth := x.req.Header.Get("Authorization")
	creds := sentCredentials(auth, st.e.APIKey)
	if len(creds) == 0 || len(x.body) == 0 {
		return "", ""
	}
	var ref *exchange // the answer to the request with made-up credentials
	for _, c := range creds {
		n := countToken(x.body, c)
		if n == 0 {
			continue
		}
		if ref == nil {
			ref = st.resendWith(x, replaceCredentials(auth, creds))
			if ref == nil {
				return "", ""
			}
		}
		if ref.resp.StatusCode == x.resp.StatusCode && countToken(ref.body, c) >= n {
			continue // the server's own text, not the credential
		}
		return c, fmt.Sprintf("the body repeats the credential %q of the request's header Authorization: %s; the body: %s",
			c, auth, bodyAround(x.body, c))
	}
	return "", ""
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
		body, err := x.req.GetBody()
		if err != nil {
			st.t.Errorf("%s: resending the request to tell an echoed credential from the server's own text: %v", x, err)
			return nil
		}
		req.Body = body
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

// countToken returns how often c occurs in body as a whole token, in the
// bytes as sent and, for a JSON body, in its string values as decoded.
func countToken(body []byte, c string) int {
	n := countTokenIn(string(body), c)
	var members map[string]json.RawMessage
	if json.Unmarshal(body, &members) != nil {
		return n
	}
	for _, raw := range members {
		var s string
		if json.Unmarshal(raw, &s) == nil && s != string(raw[1:len(raw)-1]) {
			n += countTokenIn(s, c)
		}
	}
	return n
}

// countTokenIn returns how often c occurs in s with no token character
// right before or after it.
func countTokenIn(s, c string) int {
	n := 0
	for i := 0; ; {
		j := strings.Index(s[i:], c)
		if j < 0 {
			return n
		}
		start, end := i+j, i+j+len(c)
		if (start == 0 || !isTokenChar(s[start-1])) && (end == len(s) || !isTokenChar(s[end])) {
			n++
		}
		i = start + 1
	}
}

// isTokenChar reports whether b may be part of a credential: the characters
// of token68 (RFC 9110) and of bearer tokens.
func isTokenChar(b byte) bool {
	switch {
	case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9':
		return true
	}
	return strings.IndexByte("-._~+/=", b) >= 0
}

// bodyAround returns body for a message: all of it when it is short, else
// the part around the first occurrence of c.
func bodyAround(body []byte, c string) string {
	const most = 300
	if len(body) <= most {
		return fmt.Sprintf("%q", body)
	}
	i := max(0, strings.Index(string(body), c)-most/2)
	end := min(len(body), i+most)
	return fmt.Sprintf("…%q…", body[i:end])
}
