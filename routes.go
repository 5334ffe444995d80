package petstore

import (
	"context"
	"net/http"
	"strings"
)

// Operation names an operation of the API, as the API specification names
// it. An Authenticator receives it so that a key can be allowed some
// operations and not others.
type Operation string

// The operations of the API, one for each route (see Routes). OpNone means
// a request for no operation of the API: an unknown path or method, which is
// authenticated with OpNone before it is answered so that unauthenticated
// callers learn nothing about routes, or the OpenAPI document and the
// documentation page, which are served without authentication.
const (
	OpListPets  Operation = "listPets"
	OpCreatePet Operation = "createPet"
	OpGetPet    Operation = "getPet"
	OpNone      Operation = ""
)

// apiRoutes is the API: each operation with the method and path pattern that
// reach it and the function that serves it. It is the one source of the
// API's wire facts in Go: newRouter derives from it the Operation passed to
// the Authenticator, dispatch, 405 with its Allow header, and the route
// template that an Observer sees; Routes and Allow give it to the test
// harnesses; and a test checks the OpenAPI document against it.
//
// To add an operation, name it among the Operations above, add a row here
// and write its serve function beside the others in operations.go. One that
// needs more than Store's methods asks for a small optional interface, never
// a new method of Store (CONTRIBUTING.md lists every step).
func apiRoutes() []route {
	return []route{
		{method: http.MethodGet, pattern: "/pets", op: OpListPets, serve: (*handler).listPets},
		{method: http.MethodPost, pattern: "/pets", op: OpCreatePet, serve: (*handler).createPet},
		{method: http.MethodGet, pattern: "/pets/{petId}", op: OpGetPet, serve: (*handler).getPet, deprecated: true},
	}
}

// A route is one row of the route table.
type route struct {
	method     string    // GET also answers HEAD, without a body
	pattern    string    // below the base path; a {name} segment matches any one non-empty segment
	op         Operation // OpNone for a resource that is not an operation of the API
	serve      serveFunc
	deprecated bool // every answer carries the Deprecation, Sunset and successor Link headers
	public     bool // served without authentication (the document and its page)
}

// handlerRoutes returns the route table of a handler configured by c: the
// API, then the OpenAPI document and the documentation page when c serves
// them.
func handlerRoutes(c *config) []route {
	routes := apiRoutes()
	if c.openAPI {
		routes = append(routes, route{method: http.MethodGet, pattern: OpenAPIPath, serve: (*handler).serveOpenAPI, public: true})
	}
	return append(routes, c.docs...)
}

// A Route is one operation of the API as the handler routes it.
type Route struct {
	// Method is the request method that reaches the operation. A GET route
	// also answers HEAD, without a body.
	Method string
	// Pattern is the path below the base path, with a {name} segment for
	// each path parameter, as in "/pets/{petId}".
	Pattern string
	// Operation names the operation, as the OpenAPI document's operationId
	// does.
	Operation Operation
	// Deprecated reports whether every answer of the operation carries the
	// Deprecation, Sunset and successor Link headers.
	Deprecated bool
}

// Routes returns the operations of the API in the order of the handler's
// route table, so that a host or a test can list them without restating
// them. The OpenAPI document and the documentation page, which are not
// operations, are not among them.
func Routes() []Route {
	var routes []Route
	for _, r := range apiRoutes() {
		routes = append(routes, Route{Method: r.method, Pattern: r.pattern, Operation: r.op, Deprecated: r.deprecated})
	}
	return routes
}

// Allow returns the value of the Allow header with which a handler built
// with the default options answers a method that pattern (a path below the
// base path, such as "/pets" or OpenAPIPath) does not serve: "GET, HEAD,
// POST" for "/pets". It returns "" for a pattern that no route has.
func Allow(pattern string) string {
	c := defaultConfig()
	return allowOf(handlerRoutes(&c), pattern)
}

// allowOf returns the Allow value of pattern among routes: the methods of
// its routes in their order, each GET followed by HEAD.
func allowOf(routes []route, pattern string) string {
	var allow []string
	for _, r := range routes {
		if r.pattern != pattern {
			continue
		}
		allow = append(allow, r.method)
		if r.method == http.MethodGet {
			allow = append(allow, http.MethodHead)
		}
	}
	return strings.Join(allow, ", ")
}

// A serveFunc serves one operation. It writes the response of a success
// itself and returns the error of a failure, which handler.fail answers. The
// context is the one that the Authenticator returned.
type serveFunc func(h *handler, ctx context.Context, w http.ResponseWriter, r *http.Request, p pathParams) error

// maxParams is the most parameters that a route pattern may have.
const maxParams = 2

// pathParams holds the values of a matched pattern's {name} segments, in
// their order in the pattern, still escaped as they are in the URL.
type pathParams [maxParams]string

// A resource is a path pattern of the route table with every method that
// answers it.
type resource struct {
	template string    // the base path and the pattern, as in "/v1/pets/{petId}"
	segments []segment // template, split at its slashes
	routes   []route
	allow    []string // the Allow header of a 405
	public   bool     // served without authentication
}

// A segment is one segment of a template: a literal, or a parameter.
type segment struct {
	literal string
	param   bool
}

// router matches requests against the routes below one base path.
type router struct {
	resources []resource
	notFound  string // the message of a 404 for an unknown path
}

// newRouter builds the router for routes mounted at basePath. The segments
// of basePath are literals, whatever characters they hold.
func newRouter(basePath string, routes []route) router {
	var rt router
	for _, r := range routes {
		i := rt.find(r.pattern)
		if i < 0 {
			rt.resources = append(rt.resources, resource{
				template: basePath + r.pattern,
				segments: append(splitTemplate(basePath, false), splitTemplate(r.pattern, true)...),
				public:   r.public,
				allow:    []string{allowOf(routes, r.pattern)},
			})
			i = len(rt.resources) - 1
		}
		res := &rt.resources[i]
		res.routes = append(res.routes, r)
	}
	var api []string
	for _, res := range rt.resources {
		if !res.public {
			api = append(api, res.template)
		}
	}
	rt.notFound = "no such path; the API serves " + strings.Join(api, ", ")
	if n := len(api); n > 1 {
		rt.notFound = "no such path; the API serves " + strings.Join(api[:n-1], ", ") + " and " + api[n-1]
	}
	return rt
}

// find returns the index of the resource of pattern, or -1.
func (rt *router) find(pattern string) int {
	for i, res := range rt.resources {
		if res.routes[0].pattern == pattern {
			return i
		}
	}
	return -1
}

// splitTemplate splits a path into its segments, without the leading slash.
// With params, a segment "{name}" is a parameter.
func splitTemplate(path string, params bool) []segment {
	if path == "" {
		return nil
	}
	var segs []segment
	for _, s := range strings.Split(path[1:], "/") {
		isParam := params && strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}")
		segs = append(segs, segment{literal: s, param: isParam})
	}
	return segs
}

// match finds the resource whose template the escaped path matches exactly,
// and the route of it that answers method (GET answers HEAD). It returns a
// nil route for a known path with another method, and a nil resource too
// for an unknown path. It allocates nothing.
func (rt *router) match(method, path string) (*route, *resource, pathParams) {
	var p pathParams
	for i := range rt.resources {
		res := &rt.resources[i]
		if !res.matches(path, &p) {
			continue
		}
		if method == http.MethodHead {
			method = http.MethodGet
		}
		for j := range res.routes {
			if res.routes[j].method == method {
				return &res.routes[j], res, p
			}
		}
		return nil, res, p
	}
	return nil, nil, p
}

// matches reports whether path, as escaped in the URL, matches the
// template, and sets p to its parameters when it does. A parameter matches
// one non-empty segment; nothing is cleaned or unescaped.
func (res *resource) matches(path string, p *pathParams) bool {
	n := 0
	for _, seg := range res.segments {
		if path == "" || path[0] != '/' {
			return false
		}
		path = path[1:]
		end := strings.IndexByte(path, '/')
		if end < 0 {
			end = len(path)
		}
		switch {
		case seg.param:
			if end == 0 {
				return false
			}
			p[n] = path[:end]
			n++
		case path[:end] != seg.literal:
			return false
		}
		path = path[end:]
	}
	return path == ""
}
