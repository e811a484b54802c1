# simdedge build, test and benchmark entry points. `make test` is the
# README's test command and what .ci/run executes on a fresh machine: it
# installs what the tests need, then runs every check.

SHELL := /bin/bash
GO ?= go
export PATH := $(PATH):/usr/local/go/bin

# Debian packages the tests need: curl (end-to-end server tests), iproute2 and
# ethtool (network namespaces and veth for the xdp tests), libfabric-dev (the
# rdma transport, built with -tags rdma), haproxy (a PROXY protocol sender in
# front of the server, cmd/simdedge TestServeProxyProtocol), nghttp2-client
# (nghttp, an HTTP/2 client for the h2 tests), ngtcp2-client (gtlsclient,
# ngtcp2's HTTP/3 client, for cmd/simdedge TestNgtcp2Client and, over AF_XDP,
# xdp TestHTTP3Ngtcp2OverXDP), systemd (systemd-analyze,
# which checks the units in packaging/systemd), redis-server (the store of the
# reference rate-limit service in interop's TestGlobalRateLimitReference),
# libsimdjson-dev (C++ simdjson, the JSON peer of bench/micro, bound through
# cgo in bench/internal/cjson under the bench module's simdjson build tag).
TEST_DEBS := curl openssl iproute2 ethtool libfabric-dev prometheus haproxy nghttp2-client ngtcp2-client systemd redis-server libsimdjson-dev
# BENCH_TAGS builds the bench module's cgo peers (bench/internal/cjson needs
# libsimdjson-dev); .ci/run sets REQUIRE_SIMDJSON=1, so a peer that would
# skip fails there. BENCH_TAGS= checks the bench module without them.
BENCH_TAGS ?= simdjson
# h2spec, the HTTP/2 conformance suite that server TestH2Spec runs; go install
# puts it in GOPATH/bin, which the tests look in through PATH.
H2SPEC := github.com/summerwind/h2spec/cmd/h2spec@latest
# Envoy's reference rate-limit service (its binary is service_cmd, in
# GOPATH/bin), which interop's global rate-limit test runs against Redis;
# pinned, as it is a test peer. .ci/run sets REQUIRE_RATELIMIT=1.
RATELIMIT := github.com/envoyproxy/ratelimit/src/service_cmd@v1.4.1-0.20260122083618-3fb702589d36
export PATH := $(PATH):$(shell $(GO) env GOPATH 2>/dev/null)/bin
# The load benchmarks' wrk and nginx-light are installed by bench/cmd/benchrun.
# Packages whose code has concurrency (or lazy shared state), run under the
# race detector. asm is left out: it starts no goroutines and its exhaustive
# tests take minutes under -race.
RACE_PKGS := ./parse/... ./server/... ./cmd/...
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.7.0
FUZZTIME ?= 60s
# ACMETEST enters acmetest/ (its own module: pebble, the ACME test server,
# stays out of the main go.mod) when pebble's module is at hand, or says
# why its checks are skipped; .ci/run sets REQUIRE_PEBBLE=1, which makes
# that a failure.
ACMETEST = @cd acmetest && if ! $(GO) mod download >/dev/null 2>&1; then \
	if [ "$$REQUIRE_PEBBLE" = 1 ]; then echo "acmetest: pebble's module is missing"; exit 1; fi; \
	echo "acmetest: skipped, pebble's module is missing"; exit 0; fi; echo "acmetest:" && 
# INTEROP enters interop/ (its own module: real third-party clients and
# servers, coder/websocket today, driven through the simdedge binary) when
# its modules are at hand, or says why its checks are skipped; .ci/run sets
# REQUIRE_INTEROP=1, which makes that a failure.
INTEROP = @cd interop && if ! $(GO) mod download >/dev/null 2>&1; then \
	if [ "$$REQUIRE_INTEROP" = 1 ]; then echo "interop: its modules are missing"; exit 1; fi; \
	echo "interop: skipped, its modules are missing"; exit 0; fi; echo "interop:" && 
# FLEETTEST enters fleettest/ (its own module: go-control-plane's server and
# snapshot cache, a control plane for simdedge binaries built with -tags
# fleet) when its modules are at hand, or says why its checks are skipped;
# .ci/run sets REQUIRE_FLEET=1, which makes that a failure. FLEET_CHURN (a
# duration, default 3s) sets how long its endpoint churn test runs;
# FLEET_RACE=1 builds its simdedge processes with the race detector
# (test-race does).
FLEETTEST = @cd fleettest && if ! $(GO) mod download >/dev/null 2>&1; then \
	if [ "$$REQUIRE_FLEET" = 1 ]; then echo "fleettest: its modules are missing"; exit 1; fi; \
	echo "fleettest: skipped, its modules are missing"; exit 0; fi; echo "fleettest:" && 
FUZZ_SMOKE ?= 3s

.PHONY: all deps test test-go test-tags test-race test-rdma build-checks fmt-check vet generate generate-check \
	fuzz fuzz-smoke bench bench-quick bench-asm attack lint staticcheck run

all: test

run:
	$(GO) run ./cmd/simdedge

# build puts a stamped binary in bin/simdedge (BUILD_OUT): version (git
# describe), commit and build time are linked in with -X, because the
# build info Go records itself has no build time and no revision where
# the environment sets -buildvcs=false. SOURCE_DATE_EPOCH, when set, is
# the build time (reproducible builds).
BUILD_OUT ?= bin/simdedge
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null)$(shell git diff --quiet HEAD 2>/dev/null || echo -dirty)
BUILD_DATE ?= $(shell date -u $(if $(SOURCE_DATE_EPOCH),-d @$(SOURCE_DATE_EPOCH)) +%Y-%m-%dT%H:%M:%SZ)
LDFLAGS := -X main.version=$(VERSION) -X main.commit=$(COMMIT) -X main.date=$(BUILD_DATE)
#
# FLEET=1 builds the fleet binary (-tags fleet): the xDS client, which
# follows a control plane (dynamic.xds, docs/xds.md). It is not the
# default because gRPC and Envoy's protocol types add about 21 MB to the
# binary (28 MB to 49 MB) and a few milliseconds to its start
# (bench/results/xds-fleet.md); a binary without it refuses dynamic.xds
# by name.
FLEET_TAGS := $(if $(FLEET),-tags fleet)
.PHONY: build
build:
	$(GO) build -trimpath $(FLEET_TAGS) -ldflags "$(LDFLAGS)" -o $(BUILD_OUT) ./cmd/simdedge
	@$(if $(FLEET),echo "built $(BUILD_OUT) with the xDS client (-tags fleet)",echo "built $(BUILD_OUT) without the xDS client; make build FLEET=1 for a fleet build (-tags fleet)")

# deps installs missing Debian packages (apt-get update only when something is
# missing) and downloads every module the three modules need.
deps:
	@missing=""; for p in $(TEST_DEBS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi
	$(GO) mod download
	@command -v h2spec >/dev/null || { echo "installing h2spec"; $(GO) install $(H2SPEC); }
	@command -v service_cmd >/dev/null || { echo "installing envoyproxy/ratelimit"; $(GO) install $(RATELIMIT); }
	cd bench && $(GO) mod download
	cd asm/_gen && $(GO) mod download
	cd fuzz && $(GO) mod download
	cd parse/url/_gen && $(GO) mod download
	cd acmetest && $(GO) mod download || [ "$$REQUIRE_PEBBLE" != 1 ]
	cd interop && $(GO) mod download || [ "$$REQUIRE_INTEROP" != 1 ]
	cd fleettest && $(GO) mod download || [ "$$REQUIRE_FLEET" != 1 ]

test: deps fmt-check vet staticcheck test-go test-tags test-race test-rdma build-checks generate-check fuzz-smoke
	@echo "make test: all checks passed"

fmt-check:
	@out=$$(gofmt -l . ); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...
	$(GO) vet -tags fleet ./server/... ./cmd/...
	GOARCH=arm64 $(GO) vet ./...
	cd bench && $(GO) vet ./...
	cd bench && $(GO) vet -tags "$(BENCH_TAGS)" ./...
	cd asm/_gen && $(GO) vet ./...
	cd fuzz && $(GO) vet ./...
	cd parse/url/_gen && $(GO) vet ./...
	$(ACMETEST) $(GO) vet ./...
	$(INTEROP) $(GO) vet ./...
	$(FLEETTEST) $(GO) vet ./...

test-go:
	$(GO) test -count=1 ./...
	cd bench && $(GO) test -count=1 -tags "$(BENCH_TAGS)" -run . -bench '^$$' ./...
	cd fuzz && $(GO) test -count=1 ./...
	$(ACMETEST) $(GO) test -count=1 ./...
	$(INTEROP) $(GO) test -count=1 ./...
	$(GO) test -count=1 -tags fleet -run 'Fleet' ./cmd/simdedge/
	$(FLEETTEST) $(GO) test -count=1 ./...

# The pure-Go twins: purego and noasm must build, pass and run no assembly;
# simdedgedebug poisons released request buffers so retained views show up.
test-tags:
	$(GO) test -count=1 -tags purego ./...
	$(GO) test -count=1 -tags noasm ./...
	$(GO) test -count=1 -tags simdedgedebug ./server/...
	$(GO) test -count=1 -tags fleet ./server/ratelimit/... ./server/config/... ./server/router/...

test-race:
	$(GO) test -count=1 -race $(RACE_PKGS)
	$(FLEETTEST) FLEET_RACE=1 $(GO) test -count=1 ./...

# test-rdma builds the libfabric binding (cgo, -tags rdma; libfabric-dev from
# TEST_DEBS) and runs its tests for real over the tcp and sockets providers,
# also under the race detector (Close races posts and polls by design).
# .ci/run sets REQUIRE_RDMA=1, so a missing provider fails instead of skipping.
test-rdma:
	$(GO) vet -tags rdma ./rdma/... ./cmd/...
	$(GO) test -count=1 -tags rdma ./rdma/... ./cmd/...
	$(GO) test -count=1 -race -tags rdma ./rdma/...

build-checks:
	CGO_ENABLED=0 $(GO) build ./...
	GOARCH=arm64 $(GO) build ./...
	$(GO) build -o /dev/null ./cmd/simdedge
	$(GO) build -tags fleet -o /dev/null ./cmd/simdedge

# generate rebuilds every generated file: the asm kernels (avo), xdp's
# steering program (bpf2go, with clang and llvm installed here: builds and
# tests use the committed object), the FlatBuffers envelope code (flatc,
# from Debian's flatbuffers-compiler) and parse/url's UTS #46 tables (from
# x/text, x/net/idna and Python's idna package, which the machine image
# ships); go generate also writes the configuration reference and its JSON
# Schema (docs/, from server/config/internal/gendoc).
generate:
	@command -v clang >/dev/null && command -v llvm-strip >/dev/null || { \
		if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq clang llvm >/dev/null; }
	$(GO) generate ./...
	@dpkg -s flatbuffers-compiler >/dev/null 2>&1 || { \
		if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq flatbuffers-compiler >/dev/null; }
	sh parse/json/schema/generate.sh
	cd parse/url/_gen && python3 uts46_from_python.py > /tmp/simdedge-uts46.txt && \
		$(GO) run . -uts46 /tmp/simdedge-uts46.txt > ../idna_tables.go && gofmt -w ../idna_tables.go

# generate-check regenerates every generated file in place and fails if the
# result differs from what is committed.
GENERATED := asm xdp/bpf parse/json/envelope/internal parse/url/idna_tables.go docs/config.md docs/simdedge.schema.json
generate-check: generate
	@git diff --exit-code --stat -- $(GENERATED) || { echo "generated files are stale: run make generate and commit"; exit 1; }

# fuzz runs every fuzz target for FUZZTIME (make fuzz FUZZTIME=60s);
# fuzz-smoke runs each for a few seconds as part of make test.
fuzz:
	./fuzz/run.sh $(FUZZTIME)

fuzz-smoke:
	./fuzz/run.sh $(FUZZ_SMOKE)

lint: fmt-check vet staticcheck

staticcheck:
	$(GO) run $(STATICCHECK) ./...
	$(GO) run $(STATICCHECK) -tags rdma ./rdma/... ./cmd/...
	cd bench && $(GO) run $(STATICCHECK) ./...
	cd bench && $(GO) run $(STATICCHECK) -tags "$(BENCH_TAGS)" ./internal/cjson/ ./micro/
	cd fuzz && $(GO) run $(STATICCHECK) ./...
	$(ACMETEST) $(GO) run $(STATICCHECK) ./...
	$(INTEROP) $(GO) run $(STATICCHECK) ./...
	$(GO) run $(STATICCHECK) -tags fleet ./server/... ./cmd/...
	$(FLEETTEST) $(GO) run $(STATICCHECK) ./...

# bench runs the benchmark suite (bench/cmd/benchrun): the micro benchmarks
# beside their peers, and load benchmarks (wrk against simdedge, net/http,
# fasthttp, nginx, httputil.ReverseProxy), installing wrk and nginx-light when
# missing. It writes bench/results/<date>-<host>.md, its SVG plots and a
# benchstat file. QUICK=1 for a smoke run of a few minutes;
# AREAS=url,http,json,asm,xdp,rdma,origin,pipelined,proxy (or micro, load) to select; COUNT=n on
# the command line overrides the number of micro rounds; ENGINES=loop,goroutine
# loads simdedge on each kernel TCP engine side by side.
bench:
	cd bench && $(GO) run ./cmd/benchrun $(if $(QUICK),-quick) $(if $(AREAS),-areas $(AREAS)) \
		$(if $(ENGINES),-engines $(ENGINES)) $(if $(filter command line,$(origin COUNT)),-count $(COUNT))

bench-quick:
	$(MAKE) bench QUICK=1

# bench-asm runs only the asm kernels (each SIMD level against the pure-Go twin).
bench-asm:
	$(MAKE) bench AREAS=asm

# attack runs the attack suite (bench/cmd/attack): a header-only flood,
# an idle-connection flood, a slow upload through the proxy, trickled bodies
# and slowloris; HTTP/2 to HTTP/1.1 mapping through the proxy (h2map, over
# h2c and TLS), empty-frame floods (h2flood) and paths a deny rule misses
# (normalise); against simdedge processes it starts on loopback, on each
# engine and proxy path; it prints a Markdown table (under 2 minutes on 2
# CPUs; docs/guide-reliability.md has each run's time). It builds simdedge
# into a temporary directory, or attacks BIN=PATH;
# SCENARIOS=flood,idle,upload,trickle,slowloris,h2map,h2flood,normalise to
# select; OUT=FILE to keep the table; ATTACK_FLAGS for the rest (e.g.
# -limits "max_conns_per_ip: 100").
attack:
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	bin="$(if $(BIN),$(abspath $(BIN)),$$tmp/simdedge)"; \
	$(if $(BIN),,$(GO) build -o "$$bin" ./cmd/simdedge &&) \
	cd bench && $(GO) run ./cmd/attack -bin "$$bin" $(if $(QUICK),-quick) $(if $(SCENARIOS),-scenarios $(SCENARIOS)) \
		$(if $(OUT),-out $(abspath $(OUT))) $(ATTACK_FLAGS)
include packaging/packaging.mk
