package httpapi

// A request whose client went away before it was answered (its context was
// cancelled) is recorded, by the handler's observer and logs, with these.
// They never reach a client, so they are not among the codes of error.go.
const (
	// StatusClientClosedRequest is 499 "client closed request", as nginx
	// records it: not a 5xx, since nothing failed.
	StatusClientClosedRequest = 499
	// CodeClientClosedRequest is the code recorded with it.
	CodeClientClosedRequest Code = "client_closed_request"
)
