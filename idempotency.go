package petstore

import "net/http"

// idempotencyKey returns the request's Idempotency-Key, or "" when it has
// none: 1 to MaxIdempotencyKeyLength visible ASCII characters, sent once.
func idempotencyKey(h http.Header) (string, error) {
	values := h["Idempotency-Key"]
	switch {
	case len(values) == 0:
		return "", nil
	case len(values) > 1:
		return "", invalidParameter("Idempotency-Key is given more than once; give it once")
	}
	key := values[0]
	if key == "" || len(key) > MaxIdempotencyKeyLength {
		return "", invalidParameter(msgKeyLength)
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; c < 0x21 || c > 0x7e {
			return "", invalidParameter("Idempotency-Key must hold only visible ASCII characters, without spaces")
		}
	}
	return key, nil
}
