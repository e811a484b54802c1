module github.com/simdedge/simdedge/bench

go 1.26.3

replace github.com/simdedge/simdedge => ../

require (
	github.com/cilium/ebpf v0.22.0
	github.com/minio/simdjson-go v0.4.5
	github.com/nlnwa/whatwg-url v0.6.2
	github.com/quic-go/quic-go v0.65.0
	github.com/simdedge/simdedge v0.0.0-00010101000000-000000000000
	github.com/valyala/fasthttp v1.73.0
	github.com/valyala/fastjson v1.6.10
	golang.org/x/net v0.62.0
	golang.org/x/sys v0.49.0
)

require (
	github.com/aclements/go-moremath v0.0.0-20210112150236-f10218a38794 // indirect
	github.com/andybalholm/brotli v1.3.0 // indirect
	github.com/bits-and-blooms/bitset v1.20.0 // indirect
	github.com/cncf/xds/go v0.0.0-20260202195803-dba9d589def2 // indirect
	github.com/envoyproxy/go-control-plane/envoy v1.40.0 // indirect
	github.com/envoyproxy/protoc-gen-validate v1.3.3 // indirect
	github.com/google/btree v1.1.2 // indirect
	github.com/google/flatbuffers v25.12.19+incompatible // indirect
	github.com/klauspost/compress v1.20.1 // indirect
	github.com/klauspost/cpuid/v2 v2.4.0 // indirect
	github.com/planetscale/vtprotobuf v0.6.1-0.20240319094008-0393e58bdf10 // indirect
	github.com/quic-go/qpack v0.6.0 // indirect
	github.com/valyala/bytebufferpool v1.0.0 // indirect
	go.yaml.in/yaml/v3 v3.0.6 // indirect
	golang.org/x/crypto v0.58.0 // indirect
	golang.org/x/exp v0.0.0-20260824195058-e88cd73687aa // indirect
	golang.org/x/perf v0.0.0-20260908200009-22c9c6c9d4da // indirect
	golang.org/x/text v0.43.0 // indirect
	golang.org/x/time v0.15.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260817212433-ac3dfec99bb1 // indirect
	google.golang.org/grpc v1.85.0 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
	gvisor.dev/gvisor v0.0.0-20260905035102-160fafc42237 // indirect
)

tool golang.org/x/perf/cmd/benchstat
