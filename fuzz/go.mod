module github.com/simdedge/simdedge/fuzz

go 1.26.3

replace github.com/simdedge/simdedge => ../

require (
	github.com/nlnwa/whatwg-url v0.6.2
	github.com/pires/go-proxyproto v0.15.0
	github.com/simdedge/simdedge v0.0.0-00010101000000-000000000000
)

require (
	github.com/bits-and-blooms/bitset v1.20.0 // indirect
	github.com/google/flatbuffers v25.12.19+incompatible // indirect
	github.com/klauspost/compress v1.20.1 // indirect
	github.com/klauspost/cpuid/v2 v2.4.0 // indirect
	github.com/minio/simdjson-go v0.4.5 // indirect
	github.com/quic-go/qpack v0.6.0 // indirect
	github.com/quic-go/quic-go v0.65.0 // indirect
	golang.org/x/crypto v0.58.0 // indirect
	golang.org/x/net v0.62.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.43.0 // indirect
)
