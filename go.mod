module github.com/simdedge/simdedge

go 1.26.3

require (
	github.com/cilium/ebpf v0.22.0 // indirect
	github.com/google/btree v1.1.2 // indirect
	github.com/google/flatbuffers v25.12.19+incompatible // indirect
	github.com/klauspost/compress v1.18.0 // indirect
	github.com/klauspost/cpuid/v2 v2.4.0 // indirect
	github.com/minio/simdjson-go v0.4.5 // indirect
	go.yaml.in/yaml/v3 v3.0.6 // indirect
	golang.org/x/exp v0.0.0-20250711185948-6ae5c78190dc // indirect
	golang.org/x/net v0.62.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/time v0.15.0 // indirect
	gvisor.dev/gvisor v0.0.0-20260905035102-160fafc42237 // indirect
)
