package petstore

import (
	"context"
	"net/http"
	"strings"
)

// apiRoutes is the API: each operation with the method and path pattern that
// reach it and the function that serves it. Everything else about routing
// is derived from this table by newRouter: the Operation passed to the
// Authenticator, dispatch, 405 with its Allow header, and the route template
// that an Observer sees.
//
// To add an operation, add a row here, write its serve function beside the
// others in operations.go, and give Store the method it needs.
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
	op         Operation // OpNone for a resource served without authentication
	serve      serveFunc
	deprecated bool // every answer carries the Deprecation, Sunset and successor Link headers
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
				public:   r.op == OpNone,
			})
			i = len(rt.resources) - 1
		}
		res := &rt.resources[i]
		res.routes = append(res.routes, r)
		allow := r.method
		if r.method == http.MethodGet {
			allow += ", " + http.MethodHead
		}
		if len(res.allow) == 0 {
			res.allow = []string{allow}
		} else {
			res.allow[0] += ", " + allow
		}
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
