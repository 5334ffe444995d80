module github.com/petstore-go/petstore/cmd/petstore

go 1.26.0

require (
	github.com/google/go-cmp v0.7.0
	github.com/jackc/pgx/v5 v5.12.0
	github.com/petstore-go/petstore v0.0.0-00010101000000-000000000000
	github.com/petstore-go/petstore/pgstore v0.0.0-00010101000000-000000000000
	golang.org/x/net v0.59.0
)

require (
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/puddle/v2 v2.2.3 // indirect
	golang.org/x/sync v0.23.0 // indirect
	golang.org/x/text v0.42.0 // indirect
)

replace (
	github.com/petstore-go/petstore => ../..
	github.com/petstore-go/petstore/pgstore => ../../pgstore
)
