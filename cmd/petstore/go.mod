module github.com/petstore-go/petstore/cmd/petstore

go 1.26

require github.com/petstore-go/petstore v0.0.0-00010101000000-000000000000

replace github.com/petstore-go/petstore => ../..
