module github.com/simdedge/simdedge/interop

go 1.26.3

replace github.com/simdedge/simdedge => ../

require (
	github.com/coder/websocket v1.8.15
	github.com/miekg/dns v1.1.73
	github.com/simdedge/simdedge v0.0.0-00010101000000-000000000000
	google.golang.org/grpc v1.85.0
)

require (
	golang.org/x/net v0.62.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260817212433-ac3dfec99bb1 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)
