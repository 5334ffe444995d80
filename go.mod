module github.com/petstore-go/petstore

go 1.26

require (
	github.com/google/go-cmp v0.7.0
	github.com/gorilla/mux v1.8.1
)
