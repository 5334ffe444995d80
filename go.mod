module github.com/petstore-go/petstore

go 1.26
