package petstore

import (
	"slices"
	"strings"
)

// CORSRequestHeaders returns the request headers that a browser client of
// the API sends beyond those that CORS always allows, for a host's CORS
// middleware to allow in its answer to a preflight request
// (Access-Control-Allow-Headers): Authorization for the API key,
// Content-Type for a JSON body, Idempotency-Key for a create that is safe
// to retry, If-None-Match for a conditional GET, and Last-Event-ID for a
// watch that resumes. Each call returns a new slice, which the caller may
// modify.
func CORSRequestHeaders() []string {
	return []string{"Authorization", "Content-Type", "Idempotency-Key", "If-None-Match", "Last-Event-ID"}
}

// CORSResponseHeaders returns the response headers that a browser client of
// the API reads beyond those that CORS always exposes, for a host's CORS
// middleware to expose (Access-Control-Expose-Headers): Link to the next
// page, ETag for conditional GETs, Location of a created pet,
// Idempotent-Replayed on a replayed create, Retry-After on 429, 503 and 409,
// WWW-Authenticate on 401, Allow on 405, Accept-Post on 415, the
// Deprecation and Sunset of GET /pets/{petId}, and RateLimit-Policy and
// RateLimit on the answers of a budget (see BudgetLimiter). Each call returns a new
// slice, which the caller may modify.
//
// The handler authenticates every request, OPTIONS included, and a
// preflight request carries no credentials: the CORS middleware must answer
// preflights itself, before they reach the handler (see CORSMethods).
func CORSResponseHeaders() []string {
	return []string{"Link", "ETag", "Location", "Idempotent-Replayed", "Retry-After",
		"WWW-Authenticate", "Allow", "Accept-Post", "Deprecation", "Sunset", "RateLimit-Policy", "RateLimit"}
}

// CORSMethods returns the methods that the API answers, for a host's CORS
// middleware to allow (Access-Control-Allow-Methods): those of the route
// table (see Routes), GET with HEAD, today GET, HEAD and POST. Each call
// returns a new slice, which the caller may modify.
func CORSMethods() []string {
	var methods []string
	for _, r := range apiRoutes() {
		for m := range strings.SplitSeq(allowOf([]route{r}, r.pattern), ", ") {
			if !slices.Contains(methods, m) {
				methods = append(methods, m)
			}
		}
	}
	return methods
}
