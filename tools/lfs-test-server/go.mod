module plumb.local/tools/lfs-test-server

go 1.26.0

require github.com/git-lfs/lfs-test-server v0.4.0

require (
	github.com/GeertJohan/go.rice v1.0.0 // indirect
	github.com/boltdb/bolt v1.3.1 // indirect
	github.com/daaku/go.zipexe v1.0.0 // indirect
	github.com/gorilla/context v1.1.2 // indirect
	github.com/gorilla/mux v1.8.1 // indirect
	golang.org/x/sys v0.50.0 // indirect
)
