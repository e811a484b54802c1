# Packaging targets, included by the Makefile: make build (until the
# Makefile has its own), install, uninstall, deb, docker
# (packaging/README.md).

# BUILD_OUT is the binary build writes and install and deb package.
BUILD_OUT ?= bin/simdedge
# The version stamp: cmd/simdedge's main.version, main.commit and
# main.date, set at link time so that `simdedge version` names them even
# where the environment sets -buildvcs=false. The Makefile's make build
# defines the same variables (and LDFLAGS); everything here uses ?=.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null)$(shell git diff --quiet HEAD 2>/dev/null || echo -dirty)
BUILD_DATE ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)

# make build: the Makefile's own where it has one (it sets LDFLAGS), else
# this one with the same variables.
ifneq ($(origin LDFLAGS),file)
.PHONY: build
build:
	@mkdir -p $(dir $(BUILD_OUT))
	$(GO) build -trimpath -ldflags "-X main.version=$(VERSION) -X main.commit=$(COMMIT) -X main.date=$(BUILD_DATE)" -o $(BUILD_OUT) ./cmd/simdedge
endif

# What install and deb ship is static (CGO_ENABLED=0; the rdma transport,
# which needs cgo, is built with -tags rdma separately): it runs on any
# Linux of the architecture, as the Dockerfile's does on distroless.
install deb: export CGO_ENABLED := 0

# Install layout (GNU conventions; DESTDIR stages into a tree).
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
SYSCONFDIR ?= /etc
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
DESTDIR ?=

# nfpm (goreleaser's packager), run as a Go tool at an exact version so it
# never enters the main go.mod. (2.46 and later need modules from
# go.digitalxero.dev, which the module proxy here refuses.)
NFPM := github.com/goreleaser/nfpm/v2/cmd/nfpm@v2.45.0
DEB_OUT ?= dist
# DEB_VERSION: the tag's version, or a snapshot version (debversion.sh).
DEB_VERSION ?= $(shell sh packaging/debversion.sh)
DEB_ARCH ?= $(shell $(GO) env GOARCH)

.PHONY: install uninstall deb

# install: the binary, simdedge(1) made from its help texts, the systemd
# units (ExecStart pointed at BINDIR) and the default configuration, which
# an existing one is never replaced by.
install: build
	install -D -m 0755 $(BUILD_OUT) $(DESTDIR)$(BINDIR)/simdedge
	install -d $(DESTDIR)$(MANDIR)/man1
	sh packaging/man.sh $(BUILD_OUT) > $(DESTDIR)$(MANDIR)/man1/simdedge.1
	install -d $(DESTDIR)$(SYSTEMDUNITDIR)
	sed 's#/usr/bin/simdedge#$(BINDIR)/simdedge#g; s#/etc/simdedge/#$(SYSCONFDIR)/simdedge/#g' \
		packaging/systemd/simdedge.service > $(DESTDIR)$(SYSTEMDUNITDIR)/simdedge.service
	install -m 0644 packaging/systemd/simdedge.socket $(DESTDIR)$(SYSTEMDUNITDIR)/simdedge.socket
	install -d $(DESTDIR)$(SYSCONFDIR)/simdedge
	@if [ -e $(DESTDIR)$(SYSCONFDIR)/simdedge/simdedge.yaml ]; then \
		echo "keeping the existing $(DESTDIR)$(SYSCONFDIR)/simdedge/simdedge.yaml"; \
	else install -m 0644 packaging/simdedge.yaml $(DESTDIR)$(SYSCONFDIR)/simdedge/simdedge.yaml; fi

# uninstall removes what install put in place, except the configuration.
uninstall:
	rm -f $(DESTDIR)$(BINDIR)/simdedge $(DESTDIR)$(MANDIR)/man1/simdedge.1 \
		$(DESTDIR)$(SYSTEMDUNITDIR)/simdedge.service $(DESTDIR)$(SYSTEMDUNITDIR)/simdedge.socket

# deb: DEB_OUT/simdedge_<version>_<arch>.deb, built by nfpm from
# packaging/nfpm.yaml.
deb: build
	@mkdir -p $(DEB_OUT)
	tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	sh packaging/man.sh $(BUILD_OUT) | gzip -9n > $$tmp/simdedge.1.gz && \
	SIMDEDGE_BIN=$(BUILD_OUT) SIMDEDGE_MAN=$$tmp/simdedge.1.gz DEB_VERSION='$(DEB_VERSION)' DEB_ARCH=$(DEB_ARCH) \
		$(GO) run $(NFPM) package --config packaging/nfpm.yaml --packager deb --target $(DEB_OUT)/

# docker: the container image (packaging/Dockerfile), tagged
# simdedge:$(VERSION). Needs a docker daemon that can pull golang and
# gcr.io/distroless images.
DOCKER ?= docker
.PHONY: docker
docker:
	$(DOCKER) build -f packaging/Dockerfile --build-arg VERSION=$(VERSION) --build-arg COMMIT=$(COMMIT) \
		--build-arg BUILD_DATE=$(BUILD_DATE) -t simdedge:$(VERSION) .
