package petstore

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/petstore-go/petstore/internal/wire"
)

// Operation names an operation of the API, as the API specification names
// it. An Authenticator receives it so that a key can be allowed some
// operations and not others.
type Operation string

// The operations of the API, one for each route. OpNone is a request for
// none: an unknown path or method, authenticated with OpNone before it is
// answered so that unauthenticated callers learn nothing about routes, or
// the OpenAPI document and the docs page, served without authentication.
const (
	OpListPets  Operation = "listPets"
	OpCreatePet Operation = "createPet"
	OpGetPet    Operation = "getPet"
	OpNone      Operation = ""
)

// apiRoutes is the API: each operation of wire.Routes, the one source of
// the API's wire facts in Go, with the function that serves it. newRouter
// derives from it the Operation passed to the Authenticator, dispatch, 405
// with its Allow header, and the route template that an Observer sees.
// CONTRIBUTING.md lists the steps to add an operation.
func apiRoutes() []route {
	serve := map[Operation]serveFunc{OpListPets: (*handler).listPets, OpCreatePet: (*handler).createPet, OpGetPet: (*handler).getPet}
	var routes []route
	for _, r := range wire.Routes() {
		op := Operation(r.Operation)
		routes = append(routes, route{method: r.Method, pattern: r.Pattern, op: op, serve: serve[op], deprecated: r.Deprecated})
	}
	return routes
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
// API, then the OpenAPI document and the docs page when c serves them.
func handlerRoutes(c *config) []route {
	routes := apiRoutes()
	if c.openAPI {
		routes = append(routes, route{method: http.MethodGet, pattern: wire.OpenAPIPath, serve: (*handler).serveOpenAPI, public: true})
	}
	return append(routes, c.docs...)
}

// allowOf returns the Allow value of pattern among routes: the methods of
// its routes in their order, each GET followed by HEAD.
func allowOf(routes []route, pattern string) string {
	var methods []string
	for _, r := range routes {
		if r.pattern == pattern {
			methods = append(methods, r.method)
		}
	}
	return wire.AllowOf(methods)
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
		i := slices.IndexFunc(rt.resources, func(res resource) bool { return res.routes[0].pattern == r.pattern })
		if i < 0 {
			rt.resources = append(rt.resources, resource{
				template: basePath + r.pattern,
				segments: append(splitTemplate(basePath, false), splitTemplate(r.pattern, true)...),
				public:   r.public,
				allow:    []string{allowOf(routes, r.pattern)},
			})
			i = len(rt.resources) - 1
		}
		rt.resources[i].routes = append(rt.resources[i].routes, r)
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
