module github.com/simdedge/simdedge/interop

go 1.26.3

replace github.com/simdedge/simdedge => ../

require (
	github.com/coder/websocket v1.8.15
	github.com/simdedge/simdedge v0.0.0-00010101000000-000000000000
)
